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
{{- end -}}
