{{/*
kvgen.checkPorts: service.port (vLLM's API) must not be a port another process of the pod binds
(the LMCache server, torch.distributed, NIXL): a pod's containers share one network namespace.
The chart's counterpart of kvgen/plan/ports.py; the ports are podPorts in files/runtime.yaml.
Usage: {{- include "kvgen.checkPorts" $s -}} (after kvgen.decide, which sets $s.backend)
*/}}
{{- define "kvgen.checkPorts" -}}
{{- $s := . -}}
{{- $port := int64 $s.V.service.port -}}
{{- $when := dict "lmcache" (eq $s.backend "lmcache") "multiNode" (gt (int64 $s.V.parallelism.nodes) 1) "disaggregation" (ne $s.V.disaggregation.role "none") -}}
{{- range $row := ($s.F.Get "files/runtime.yaml" | fromYaml).podPorts -}}
{{- if and (index $when $row.when) (eq (int64 $row.port) $port) -}}
{{- include "kvgen.problem" (list $s "service.port" (printf "port %d is %s; vLLM could not bind it in the same pod" $port $row.what) "pick another port, e.g. 8000") -}}
{{- end -}}
{{- end -}}
{{/* service.extraPorts: unique names and port/protocol pairs with the API's http (ValidateService: Duplicate value), and no target kvgen's own processes bind */}}
{{- $names := dict "http" "the API's port" -}}
{{- $pairs := dict (printf "%d/TCP" $port) "service.port, the API's" -}}
{{- range $i, $p := default list $s.V.service.extraPorts -}}
{{- $here := printf "service.extraPorts[%d]" $i -}}
{{- if hasKey $names (toString $p.name) -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $here) (printf "%s is already the name of %s (ValidateService: Duplicate value)" (include "kvgen.quoted" $p.name) (index $names (toString $p.name))) "use another name") -}}
{{- else -}}{{- $_ := set $names (toString $p.name) $here -}}{{- end -}}
{{- $protocol := default "TCP" $p.protocol -}}
{{- $pair := printf "%d/%s" (int64 $p.port) $protocol -}}
{{- if hasKey $pairs $pair -}}
{{- include "kvgen.problem" (list $s (printf "%s.port" $here) (printf "port %s is already %s (ValidateService: Duplicate value)" $pair (index $pairs $pair)) "use another port") -}}
{{- else -}}{{- $_ := set $pairs $pair $here -}}{{- end -}}
{{- $set := include "kvgen.isSet" (list $p "targetPort") -}}
{{- $target := ternary $p.targetPort $p.port (not (not $set)) -}}
{{- range $row := ($s.F.Get "files/runtime.yaml" | fromYaml).podPorts -}}
{{- if and (index $when $row.when) (not (kindIs "string" $target)) (eq (int64 $row.port) (int64 $target)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $here (ternary "targetPort" "port" (not (not $set)))) (printf "port %d is %s; kvgen keeps it inside the pod" (int64 $target) $row.what) "target vLLM's API (targetPort: http) or leave the port out") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
