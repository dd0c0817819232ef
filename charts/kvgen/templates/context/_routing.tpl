{{/* The layout (kvgen.layout, _context.tpl), its pieces: routing.mode gateway's objects. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.routing: routing.mode gateway: the InferencePool of the API pods (rank 0 of a multi-node
server), its Endpoint Picker (files/runtime.yaml picker) and the HTTPRoute.
Sets $s.routing (empty for the other modes).
Usage: {{- include "kvgen.context.routing" $s -}} (after workloads and tiers)
*/}}
{{- define "kvgen.context.routing" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $r := default dict $v.routing -}}
{{- $out := dict -}}
{{- if eq (default "none" $r.mode) "gateway" -}}
{{- $rt := $s.rt.picker -}}
{{- $key := $s.W.labels -}}
{{- $picker := default dict $r.picker -}}
{{- $replicas := include "kvgen.routingValue" (list $picker "replicas" 1) | int64 -}}
{{- $name := printf "%s-epp" $v.name -}}
{{- $pool := printf "%s-pool" $v.name -}}
{{- $image := $s.plan.images.picker -}}
{{- $selector := dict $key.name "endpoint-picker" $key.instance $s.release.name -}}
{{- $labels := mergeOverwrite (deepCopy $s.meta.labels) $selector (dict $key.component "router" $key.version $rt.image.tag) -}}
{{- $args := list (printf "--pool-name=%s" $pool) (printf "--grpc-port=%d" (int64 $rt.grpcPort)) (printf "--grpc-health-port=%d" (int64 $rt.grpcHealthPort)) (printf "--metrics-port=%d" (int64 $rt.metricsPort)) "--metrics-endpoint-auth=false" "--tracing=false" "--config-file=/config/config.json" -}}
{{- if gt $replicas 1 -}}{{- $args = append $args "--ha-enable-leader-election" -}}{{- end -}}
{{/* the EndpointPickerConfig */}}
{{- $sc := default dict $picker.scorers -}}
{{- $plugins := list (dict "type" "single-profile-handler") (dict "type" "metrics-data-source" "parameters" (dict "scheme" "http" "path" $s.W.vllmMetricsPath)) (dict "type" "core-metrics-extractor") -}}
{{- $profile := list -}}
{{- range $pair := list (list "queue-scorer" "queue" 2) (list "kv-cache-utilization-scorer" "kvCacheUtilization" 2) (list "prefix-cache-scorer" "prefixCache" 3) (list "no-hit-lru-scorer" "noHitLru" 2) -}}
{{- $kind := index $pair 0 -}}
{{- $weight := include "kvgen.routingValue" (list $sc (index $pair 1) (index $pair 2)) | int64 -}}
{{- if gt $weight 0 -}}
{{- if eq $kind "prefix-cache-scorer" -}}
{{- $index := $s.plan.routing -}}
{{- $plugins = append $plugins (dict "type" "approx-prefix-cache-producer" "parameters" (dict "autoTune" false "blockSizeTokens" (int64 $index.blockSizeTokens) "maxPrefixTokensToMatch" (int64 $rt.maxPrefixTokensToMatch) "lruCapacityPerServer" (int64 $index.lruCapacityPerServer))) -}}
{{- end -}}
{{- $plugins = append $plugins (dict "type" $kind) -}}
{{- $profile = append $profile (dict "pluginRef" $kind "weight" $weight) -}}
{{- end -}}
{{- end -}}
{{- $plugins = append $plugins (dict "type" "max-score-picker") -}}
{{- $profile = append $profile (dict "pluginRef" "max-score-picker") -}}
{{- $config := dict "apiVersion" $rt.configApiVersion "kind" "EndpointPickerConfig" "plugins" $plugins "schedulingProfiles" (list (dict "name" "default" "plugins" $profile)) -}}
{{- $pick := dict "name" $name "replicas" $replicas "image" $image "labels" $labels "podLabels" (mergeOverwrite (deepCopy $s.meta.commonLabels) $selector) "selector" $selector "args" $args "config" (toPrettyJson $config) "leaderElection" (gt $replicas 1) "grpcPort" (int64 $rt.grpcPort) "grpcHealthPort" (int64 $rt.grpcHealthPort) "metricsPort" (int64 $rt.metricsPort) "resources" (deepCopy $rt.resources) -}}
{{- $g := $r.gateway -}}
{{- $parents := list -}}
{{- range $p := $g.parentRefs -}}
{{- $parent := dict "group" "gateway.networking.k8s.io" "kind" "Gateway" "name" $p.name -}}
{{- if include "kvgen.isSet" (list $p "namespace") -}}{{- $_ := set $parent "namespace" $p.namespace -}}{{- end -}}
{{- if include "kvgen.isSet" (list $p "sectionName") -}}{{- $_ := set $parent "sectionName" $p.sectionName -}}{{- end -}}
{{- $parents = append $parents $parent -}}
{{- end -}}
{{- $route := dict "name" $v.name "parentRefs" $parents "pathPrefix" (default "/" $g.pathPrefix) "port" (int64 $v.service.port) -}}
{{- if $g.hostnames -}}{{- $_ := set $route "hostnames" $g.hostnames -}}{{- end -}}
{{/* the request timeout: routing.gateway.requestTimeout, else the inferencepool charts' 300s (none on GKE: its GCPBackendPolicy's) */}}
{{- $provider := default "none" $g.provider -}}
{{- if include "kvgen.isSet" (list $g "requestTimeout") -}}{{- $_ := set $route "requestTimeout" $g.requestTimeout -}}
{{- else if ne $provider "gke" -}}{{- $_ := set $route "requestTimeout" $rt.defaultRequestTimeout -}}{{- end -}}
{{- $poolCtx := dict "name" $pool "selector" (index $s.workloads 0).pod.selector "targetPort" (int64 $v.service.port) "failureMode" (default "FailOpen" $picker.failureMode) -}}
{{- $routing := dict "pool" $poolCtx "picker" $pick "route" $route "provider" $provider -}}
{{- if eq $provider "istio" -}}
{{- $host := $name -}}
{{- if $v.namespace -}}{{- $host = printf "%s.%s.svc.cluster.local" $name $v.namespace -}}{{- end -}}
{{- $_ := set $routing "destinationRule" (dict "name" $name "host" $host) -}}
{{- end -}}
{{- if eq $provider "gke" -}}{{- $_ := set $routing "gke" (dict "healthPath" $rt.gke.healthPath "backendTimeoutSec" (int64 $rt.gke.backendTimeoutSec)) -}}{{- end -}}
{{- $_ := set $out "routing" $routing -}}
{{- end -}}
{{- $_ := set $s "routing" $out -}}
{{- end -}}
