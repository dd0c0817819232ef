{{/* The layout (kvgen.layout, _context.tpl), its pieces: the operations objects. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.operations: the operations objects, each left out when off: disruptionBudget (a
PodDisruptionBudget), podMonitor and serviceMonitor (Prometheus Operator), scaledObject (KEDA)
or hpa (a HorizontalPodAutoscaler). Sets $s.operations (a map of those keys).
Usage: {{- include "kvgen.context.operations" $s -}} (after workloads)
*/}}
{{- define "kvgen.context.operations" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $out := dict -}}
{{- $a := $v.autoscaling -}}
{{- $budget := $v.disruptionBudget -}}
{{- $most := int64 $v.replicas -}}
{{- if $a -}}{{- $most = int64 $a.maxReplicas -}}{{- end -}}
{{- $on := gt $most 1 -}}
{{- if not (kindIs "invalid" $budget.enabled) -}}{{- $on = $budget.enabled -}}{{- end -}}
{{- if $on -}}
{{- $max := $budget.maxUnavailable -}}
{{- if not (kindIs "string" $max) -}}{{- $max = int64 $max -}}{{- end -}}
{{- $_ := set $out "disruptionBudget" (dict "name" $v.name "selector" $s.meta.selector "maxUnavailable" $max) -}}
{{- end -}}
{{- $m := $v.metrics -}}
{{- $labels := mergeOverwrite (deepCopy $s.meta.labels) (default dict $m.labels) -}}
{{- $vllmEndpoint := dict "port" "http" "path" $s.W.vllmMetricsPath "interval" $m.interval -}}
{{- if $m.podMonitor -}}
{{- $endpoints := list $vllmEndpoint -}}
{{- if and $s.lmcache $s.lmcacheScraped -}}
{{- $endpoints = append $endpoints (dict "port" $s.W.lmcache.httpPortName "path" $s.W.lmcache.metricsPath "interval" $m.interval) -}}
{{- end -}}
{{/* the pods serving the API: rank 0 of a multi-node server (ranks 1.. serve no /metrics) */}}
{{- $_ := set $out "podMonitor" (dict "name" $v.name "labels" $labels "selector" (index $s.workloads 0).pod.selector "endpoints" $endpoints) -}}
{{- end -}}
{{- if $m.serviceMonitor -}}
{{- $_ := set $out "serviceMonitor" (dict "name" $v.name "labels" $labels "selector" $s.meta.selector "endpoints" (list $vllmEndpoint)) -}}
{{- end -}}
{{- if $a -}}
{{- $min := 1 -}}
{{- if not (kindIs "invalid" $a.minReplicas) -}}{{- $min = $a.minReplicas -}}{{- end -}}
{{- $scale := dict "name" $v.name "target" $v.name "minReplicas" (int64 $min) "maxReplicas" (int64 $a.maxReplicas) -}}
{{- if $a.keda -}}
{{- $k := $a.keda -}}
{{- if not (kindIs "invalid" $k.pollingInterval) -}}{{- $_ := set $scale "pollingInterval" (int64 $k.pollingInterval) -}}{{- end -}}
{{- if not (kindIs "invalid" $k.cooldownPeriod) -}}{{- $_ := set $scale "cooldownPeriod" (int64 $k.cooldownPeriod) -}}{{- end -}}
{{- $_ := set $scale "serverAddress" $k.serverAddress -}}
{{/* the spec's namespace only: without one, no namespace matcher */}}
{{- $where := "" -}}
{{- if $v.namespace -}}{{- $where = printf "namespace=%q," $v.namespace -}}{{- end -}}
{{- $query := printf "sum(vllm:num_requests_waiting{%spod=~%q})" $where (printf "%s-[a-z0-9]+-[a-z0-9]+" $v.name) -}}
{{- if not (kindIs "invalid" $k.query) -}}{{- $query = $k.query -}}{{- end -}}
{{- $_ := set $scale "query" $query -}}
{{- $_ := set $scale "threshold" (default "5" $k.threshold) -}}
{{- $_ := set $out "scaledObject" $scale -}}
{{- else if $a.hpa -}}
{{- $_ := set $scale "metrics" $a.hpa.metrics -}}
{{- $_ := set $out "hpa" $scale -}}
{{- end -}}
{{- end -}}
{{- $_ := set $s "operations" $out -}}
{{- end -}}
