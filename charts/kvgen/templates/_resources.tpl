{{/* kvgen.resources: requests and limits from a sized container, with its device-plugin GPUs or DRA
claims (kvgen.context.resources). Usage: include "kvgen.resources" (list $size $gpuRequests $claims) | fromJson */}}
{{- define "kvgen.resources" -}}
{{- $size := index . 0 -}}{{- $gpu := index . 1 -}}{{- $claims := index . 2 -}}
{{- $requests := dict -}}
{{- if $size.cpu -}}{{- $_ := set $requests "cpu" $size.cpu -}}{{- end -}}
{{- $_ := set $requests "memory" (include "kvgen.formatBytes" $size.memory) -}}
{{- if gt (int64 $size.ephemeral) 0 -}}{{- $_ := set $requests "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeral) -}}{{- end -}}
{{- $limits := dict -}}
{{- if $size.cpuLimit -}}{{- $_ := set $limits "cpu" $size.cpuLimit -}}{{- end -}}
{{- $_ := set $limits "memory" (include "kvgen.formatBytes" $size.limit) -}}
{{- if hasKey $size "ephemeralLimit" -}}{{- $_ := set $limits "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeralLimit) -}}{{- end -}}
{{- range $k, $n := $gpu -}}{{- $_ := set $requests $k $n -}}{{- $_ := set $limits $k $n -}}{{- end -}}
{{- $out := dict "requests" $requests "limits" $limits -}}
{{- if $claims -}}{{- $_ := set $out "claims" $claims -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}
