{{/* The layout (kvgen.layout, _context.tpl), its pieces: the operations objects. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.operations: the operations objects, each left out when off: disruptionBudget (a
PodDisruptionBudget), podMonitor, serviceMonitor and prometheusRule (Prometheus Operator), dashboard
(a ConfigMap for Grafana's sidecar), scaledObject (KEDA) or hpa (a HorizontalPodAutoscaler). Sets
$s.operations (a map of those keys).
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
{{/* the server's pods in PromQL (files/runtime.yaml monitoring): the spec's namespace only, as KEDA's query */}}
{{- $mon := $s.rt.monitoring -}}
{{- $pods := replace "@NAME@" $v.name $mon.pods -}}
{{- $server := replace "@PODS@" $pods $mon.selectorWithoutNamespace -}}
{{- if $v.namespace -}}{{- $server = replace "@PODS@" $pods (replace "@NAMESPACE@" $v.namespace $mon.selector) -}}{{- end -}}
{{- $expected := "" -}}
{{- if not (kindIs "invalid" $m.expectedHitRatio) -}}{{- $expected = toString $m.expectedHitRatio -}}{{- end -}}
{{- if $m.prometheusRule -}}
{{- $rules := list -}}
{{- range $a := $mon.alerts -}}
{{- $on := or (eq $a.when "always") (and (eq $a.when "expected") (ne $expected "")) (and (eq $a.when "lmcache") $s.lmcache $s.lmcacheScraped) (and (eq $a.when "native") (eq (toString $s.plan.backend) "native")) -}}
{{- if $on -}}
{{- $notes := dict "summary" (replace "@EXPECTED@" $expected $a.summary) "description" (replace "@EXPECTED@" $expected $a.description) -}}
{{- $rules = append $rules (dict "alert" $a.alert "expr" (replace "@EXPECTED@" $expected (replace "@SERVER@" $server $a.expr)) "for" $a.for "labels" (dict "severity" $a.severity) "annotations" $notes) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $out "prometheusRule" (dict "name" (printf "%s-kv-cache" $v.name) "labels" $labels "groups" (list (dict "name" (printf "kvgen.%s.kv-cache" $v.name) "rules" $rules))) -}}
{{- end -}}
{{- if $m.dashboard -}}
{{/* files/dashboard.json (tools/dashboard.py) with this server's values in its variables */}}
{{- $d := $s.F.Get "files/dashboard.json" | fromJson -}}
{{- $disk := 0 -}}
{{- $known := false -}}
{{- range $t := default list $s.plan.sizes.tiers -}}{{- if not (kindIs "invalid" $t.capacity) -}}{{- $disk = add $disk (int64 $t.capacity) -}}{{- $known = true -}}{{- end -}}{{- end -}}
{{- $vars := dict "namespace" (default ".*" $v.namespace) "pod" $pods "picker" (printf "%s-epp-[a-z0-9]+-[a-z0-9]+" $v.name) "expectedHitRatio" (default "NaN" $expected) "cpuTierBytes" "NaN" "diskTierBytes" "NaN" -}}
{{- if $s.plan.backend -}}{{- $_ := set $vars "cpuTierBytes" (toString (int64 $s.plan.sizes.cpuTier)) -}}{{- end -}}
{{- if and $s.plan.backend $known -}}{{- $_ := set $vars "diskTierBytes" (toString $disk) -}}{{- end -}}
{{- range $x := $d.templating.list -}}
{{- if hasKey $vars $x.name -}}{{- $_ := set $x "query" (index $vars $x.name) -}}{{- end -}}
{{- end -}}
{{- $where := $v.name -}}
{{- if $v.namespace -}}{{- $where = printf "%s/%s" $v.namespace $v.name -}}{{- end -}}
{{- $_ := set $d "uid" (printf "kvgen-%s" (trunc 24 (sha256sum $where))) -}}
{{- $_ := set $d "title" (printf "kvgen: %s" $where) -}}
{{- $_ := set $out "dashboard" (dict "name" (printf "%s-dashboard" $v.name) "labels" (mergeOverwrite (deepCopy $s.meta.labels) $m.dashboardLabels) "file" (printf "%s.json" $v.name) "json" (toPrettyJson $d)) -}}
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
