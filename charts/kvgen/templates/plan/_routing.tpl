{{/*
routing (docs/routing.md): the chart's counterpart of kvgen/plan/routing.py check, warnings and
lru_capacity; its context piece, kvgen.context.routing, is in context/_context.tpl.
*/}}

{{/* kvgen.checkRouting: the section's fields against its mode, and what the gateway mode cannot work with. */}}
{{- define "kvgen.checkRouting" -}}
{{- $s := . -}}
{{- $r := default dict $s.V.routing -}}
{{- $mode := default "none" $r.mode -}}
{{- range $pair := list (list "sessionAffinity" "sessionAffinity") (list "picker" "gateway") (list "gateway" "gateway") -}}
{{- $key := index $pair 0 -}}{{- $want := index $pair 1 -}}
{{- if and (include "kvgen.isSet" (list $r $key)) (ne $mode $want) -}}
{{- include "kvgen.problem" (list $s (printf "routing.%s" $key) (printf "routing.%s applies to routing.mode %s, but the mode is %s" $key $want $mode) (printf "set routing.mode: %s, or leave routing.%s out" $want $key)) -}}
{{- end -}}
{{- end -}}
{{- if eq $mode "gateway" -}}
{{- if not (include "kvgen.isSet" (list $r "gateway")) -}}
{{- include "kvgen.problem" (list $s "routing.gateway.parentRefs" "required with routing.mode gateway: the Gateway the HTTPRoute attaches to" "name your Gateway, e.g. routing.gateway.parentRefs: [{name: inference-gateway}]") -}}
{{- end -}}
{{- $role := $s.V.disaggregation.role -}}
{{- if ne $role "none" -}}
{{- include "kvgen.problem" (list $s "routing.mode" (printf "routing.mode gateway picks among equal servers; a %s server of a prefill/decode pair needs a picker profile that pairs them, which kvgen does not render" $role) "set routing.mode none (or sessionAffinity) for a prefill/decode pair") -}}
{{- end -}}
{{- range $n, $a := default list $s.V.vllm.extraArgs -}}
{{- if eq (replace "_" "-" (splitn "." 2 (splitn "=" 2 (toString $a))._0)._0) "--no-enable-prefix-caching" -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" $n) "--no-enable-prefix-caching turns vLLM's prefix cache off, and routing.mode gateway routes each request to the server that holds its prefix" "remove --no-enable-prefix-caching, or set routing.mode none") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.routingWarnings: routing with a single server (kvgen/plan/routing.py warnings). A JSON list. */}}
{{- define "kvgen.routingWarnings" -}}
{{- $s := . -}}
{{- $mode := default "none" (default dict $s.V.routing).mode -}}
{{- $most := int64 $s.V.replicas -}}
{{- if $s.V.autoscaling -}}{{- $most = int64 $s.V.autoscaling.maxReplicas -}}{{- end -}}
{{- $out := list -}}
{{- if and (ne $mode "none") (le $most 1) -}}
{{- $out = append $out (printf "routing.mode %s with one replica: every request reaches the same server; routing keeps the caches warm from 2 replicas on" $mode) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.routingValue: routing.picker's FIELD (or scorers' FIELD), else the default; 0 is a value. */}}
{{- define "kvgen.routingValue" -}}
{{- $m := index . 0 -}}{{- $k := index . 1 -}}{{- $default := index . 2 -}}
{{- if include "kvgen.isSet" (list $m $k) -}}{{- int64 (index $m $k) -}}{{- else -}}{{- $default -}}{{- end -}}
{{- end -}}
