{{/* The layout (kvgen.layout, _context.tpl), its pieces: the labels, the selector and the annotations every object carries. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.meta: the labels, the selector and the annotations that record the decision.
Sets $s.meta: labels, selector, annotations (keys: wiring.labels, wiring.annotations).
Usage: {{- include "kvgen.context.meta" $s -}}
*/}}
{{- define "kvgen.context.meta" -}}
{{- $s := . -}}
{{- $key := $s.W.labels -}}
{{- $note := $s.W.annotations -}}
{{- $role := $s.V.disaggregation.role -}}
{{/* under Helm: the release is the instance (kvgen: the name), Helm manages it and the chart is named;
     helm.sh/chart stays off the pod template (labels), so a new chart version alone restarts no server */}}
{{- $selector := dict $key.name "vllm" $key.instance $s.release.name -}}
{{/* maps are built in the order kvgen writes their keys (kvgen keeps a map's order, Helm sorts it) */}}
{{- $labels := merge (dict) $selector (dict $key.component (ternary "inference" $role (eq $role "none")) $key.version $s.plan.images.vllmTag $key.partOf $s.V.name $key.managedBy $s.release.service) -}}
{{- $common := default dict $s.V.commonLabels -}}
{{/* commonLabels: on every object and pod template, never in a selector (kvgen's own keys are refused there) */}}
{{- $objectLabels := mergeOverwrite (dict) $common $labels -}}
{{- if $s.release.chartLabel -}}{{- $_ := set $objectLabels $key.chart $s.release.chartLabel -}}{{- end -}}
{{/* a prefill/decode pair in routing.mode gateway: the pods of both servers carry the decode server's pool label
     (its name) and their role, which the picker's prefill and decode filters read */}}
{{- $pair := "" -}}
{{- if and (eq $role "decode") (eq (default "none" (default dict $s.V.routing).mode) "gateway") -}}{{- $pair = $s.V.name -}}
{{- else if eq $role "prefill" -}}{{- $pair = default "" $s.V.disaggregation.decodeServer -}}{{- end -}}
{{- if $pair -}}{{- $labels = merge (dict) $labels (dict $s.W.pairLabels.pool $pair $s.W.pairLabels.role $role) -}}{{- end -}}
{{- $annotations := dict $note.offloading (ternary "enabled" "disabled" $s.plan.decision.enabled) -}}
{{- if $s.plan.decision.enabled -}}
{{- $_ := set $annotations $note.backend $s.backend -}}
{{- else -}}
{{- $_ := set $annotations $note.reason $s.plan.decision.code -}}
{{- end -}}
{{- if $s.gpuAccess -}}{{- $_ := set $annotations $note.gpuAccess $s.gpuAccess.mode -}}{{- end -}}
{{- $_ := set $s "meta" (dict "labels" $objectLabels "podLabels" $labels "commonLabels" $common "selector" $selector "annotations" $annotations) -}}
{{- end -}}
