{{/* kvgen.resources: requests and limits from a sized container, with its device-plugin GPUs or DRA
claims (kvgen.context.resources). Usage: include "kvgen.resources" (list $size $gpuRequests $claims) | fromJson */}}
{{- define "kvgen.resources" -}}
{{- $size := index . 0 -}}{{- $gpu := index . 1 -}}{{- $claims := index . 2 -}}
{{- $requests := dict "memory" (include "kvgen.formatBytes" $size.memory) -}}
{{- if $size.cpu -}}{{- $_ := set $requests "cpu" $size.cpu -}}{{- end -}}
{{- if gt (int64 $size.ephemeral) 0 -}}{{- $_ := set $requests "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeral) -}}{{- end -}}
{{- $limits := dict "memory" (include "kvgen.formatBytes" $size.limit) -}}
{{- if $size.cpuLimit -}}{{- $_ := set $limits "cpu" $size.cpuLimit -}}{{- end -}}
{{- if hasKey $size "ephemeralLimit" -}}{{- $_ := set $limits "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeralLimit) -}}{{- end -}}
{{- range $k, $n := $gpu -}}{{- $_ := set $requests $k $n -}}{{- $_ := set $limits $k $n -}}{{- end -}}
{{- $out := dict "requests" $requests "limits" $limits -}}
{{- if $claims -}}{{- $_ := set $out "claims" $claims -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.withServer: gpuAccess in-container: the vLLM container's size plus the LMCache server's
(kvgen/plan/types.py with_server); its CPU is the vLLM container's. */}}
{{- define "kvgen.withServer" -}}
{{- $a := index . 0 -}}{{- $b := index . 1 -}}
{{- $out := dict "cpu" $a.cpu "memory" (add (int64 $a.memory) (int64 $b.memory)) "limit" (add (int64 $a.limit) (int64 $b.limit)) "ephemeral" (add (int64 $a.ephemeral) (int64 $b.ephemeral)) -}}
{{- if hasKey $a "cpuLimit" -}}{{- $_ := set $out "cpuLimit" $a.cpuLimit -}}{{- end -}}
{{- if or (hasKey $a "ephemeralLimit") (hasKey $b "ephemeralLimit") -}}
{{- $_ := set $out "ephemeralLimit" (add (int64 (ternary $a.ephemeralLimit $a.ephemeral (hasKey $a "ephemeralLimit"))) (int64 (ternary $b.ephemeralLimit $b.ephemeral (hasKey $b "ephemeralLimit")))) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
