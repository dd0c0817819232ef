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
{{- $g := $r.gateway -}}
{{/* the names: kvgen's, or KServe's controller's (kmeta.ChildName, kserve aaac4e29 scheduler.go:337,392,692,778,800,
types_func.go:26-41, router.go:241, workload.go:178-180; plain NAME+suffix, which routing.naming kserve keeps within 63) */}}
{{- $kserve := eq (default "kvgen" $r.naming) "kserve" -}}
{{- $name := printf "%s-epp" $v.name -}}
{{- $pool := printf "%s-pool" $v.name -}}
{{- $names := dict "deployment" $name "service" $name "serviceAccount" $name "role" $name "roleBinding" $name "configMap" $name -}}
{{- $routeName := $v.name -}}
{{- $svcName := $v.name -}}
{{- if $kserve -}}
{{- $pool = printf "%s-inference-pool" $v.name -}}
{{- $names = dict "deployment" (printf "%s-kserve-router-scheduler" $v.name) "service" (printf "%s-epp-service" $v.name) "serviceAccount" (printf "%s-epp-sa" $v.name) "role" (printf "%s-epp-role" $v.name) "roleBinding" (printf "%s-epp-rb" $v.name) "configMap" (printf "%s-epp-config" $v.name) -}}
{{- $routeName = printf "%s-kserve-route" $v.name -}}
{{- $svcName = printf "%s-kserve-workload-svc" $v.name -}}
{{- end -}}
{{/* the backend: the InferencePool kvgen renders with its picker, an existing one (poolRef: neither rendered),
or the Service (backend service: neither rendered) */}}
{{- $backend := default "pool" $g.backend -}}
{{- $ownPool := and (eq $backend "pool") (not (include "kvgen.isSet" (list $g "poolRef"))) -}}
{{- if include "kvgen.isSet" (list $g "poolRef") -}}{{- $pool = $g.poolRef -}}{{- end -}}
{{- $port := int64 $v.service.port -}}
{{- $target := dict "group" "inference.networking.k8s.io" "kind" "InferencePool" "name" $pool "port" $port -}}
{{/* a Service backendRef leaves group out: the core group, the API server's default (as KServe's route preset writes it) */}}
{{- if eq $backend "service" -}}{{- $target = dict "kind" "Service" "name" $svcName "port" $port -}}{{- end -}}
{{- $parents := list -}}
{{- range $p := $g.parentRefs -}}
{{- $parent := dict "group" "gateway.networking.k8s.io" "kind" "Gateway" "name" $p.name -}}
{{- if include "kvgen.isSet" (list $p "namespace") -}}{{- $_ := set $parent "namespace" $p.namespace -}}{{- end -}}
{{- if include "kvgen.isSet" (list $p "sectionName") -}}{{- $_ := set $parent "sectionName" $p.sectionName -}}{{- end -}}
{{- $parents = append $parents $parent -}}
{{- end -}}
{{- $route := dict "name" $routeName "parentRefs" $parents "pathPrefix" (default "/" $g.pathPrefix) "port" $port "backendRefs" (list $target) -}}
{{- if $g.hostnames -}}{{- $_ := set $route "hostnames" $g.hostnames -}}{{- end -}}
{{/* the request timeout: routing.gateway.requestTimeout, else the inferencepool charts' 300s (none on GKE: its GCPBackendPolicy's) */}}
{{- $provider := default "none" $g.provider -}}
{{- if include "kvgen.isSet" (list $g "requestTimeout") -}}{{- $_ := set $route "requestTimeout" $g.requestTimeout -}}
{{- else if ne $provider "gke" -}}{{- $_ := set $route "requestTimeout" $rt.defaultRequestTimeout -}}{{- end -}}
{{/* model.lora: the adapters' names, in byte order as KServe sorts them (config_merge.go:615-619) */}}
{{- $adapters := list -}}
{{/* rules kserve: an adapter named publishers/<namespace>/models/... is the alias of another, matched with it */}}
{{- $alias := printf "publishers/%s/models/" (toString $v.namespace) -}}
{{- range $a := default list (default dict $v.model.lora).adapters -}}
{{- if or (ne (default "prefix" $g.rules) "kserve") (ne (trunc (len $alias) (toString $a.name)) $alias) -}}{{- $adapters = append $adapters $a.name -}}{{- end -}}
{{- end -}}
{{- $adapters = sortAlpha $adapters -}}
{{- $header := $rt.modelNameHeader -}}
{{- if eq (default "prefix" $g.rules) "kserve" -}}
{{/* KServe's kserve-config-llm-router-route (config/llmisvcconfig/config-llm-router-route.yaml:34-342): the
paths of the service and of its publisher model, rewritten to /v1/...; the model-routing header rules, each
header match repeated per adapter (config_merge.go expandLoRAAdapterMatches :603-642); the catch-alls to the
Service. Every backendRef weight 1, every rule's timeouts 0s (none), as there. */}}
{{- $ns := $v.namespace -}}
{{- $model := default $v.name $g.modelName -}}
{{- $value := printf "publishers/%s/models/%s" $ns $model -}}
{{- $b := dict "kind" $target.kind "name" $target.name "port" $port "weight" 1 -}}
{{- if hasKey $target "group" -}}{{- $b = dict "group" $target.group "kind" $target.kind "name" $target.name "port" $port "weight" 1 -}}{{- end -}}
{{- $svc := dict "kind" "Service" "name" $svcName "port" $port "weight" 1 -}}
{{- $timeouts := dict "backendRequest" "0s" "request" "0s" -}}
{{- if include "kvgen.isSet" (list $g "requestTimeout") -}}{{- $timeouts = dict "request" $g.requestTimeout -}}{{- end -}}
{{- $endpoints := list (list "completions" "/v1/completions") (list "chat-completions" "/v1/chat/completions") (list "responses" "/v1/responses") (list "messages" "/v1/messages") -}}
{{- $rules := list -}}
{{- range $e := $endpoints -}}
{{- $rules = append $rules (dict "name" (printf "v1-%s-path" (index $e 0)) "backendRefs" (list $b) "matches" (list (dict "path" (dict "type" "PathPrefix" "value" (printf "/%s/%s%s" $ns $v.name (index $e 1))))) "filters" (list (dict "type" "URLRewrite" "urlRewrite" (dict "path" (dict "type" "ReplacePrefixMatch" "replacePrefixMatch" (index $e 1))))) "timeouts" $timeouts) -}}
{{- end -}}
{{- $base := list -}}
{{- range $e := $endpoints -}}
{{- range $path := list (index $e 1) (printf "%s/" (index $e 1)) -}}
{{- $base = append $base (dict "path" (dict "type" "Exact" "value" $path) "headers" (list (dict "type" "Exact" "name" $header "value" $value))) -}}
{{- end -}}
{{- end -}}
{{- $matches := $base -}}
{{- range $m := $base -}}
{{- range $a := $adapters -}}
{{- $matches = append $matches (dict "path" $m.path "headers" (list (dict "type" "Exact" "name" $header "value" (printf "publishers/%s/models/%s" $ns $a)))) -}}
{{- end -}}
{{- end -}}
{{- $rules = append $rules (dict "name" "v1-model-routing" "backendRefs" (list $b) "matches" $matches "timeouts" $timeouts) -}}
{{- range $e := $endpoints -}}
{{- $rules = append $rules (dict "name" (printf "v1-%s-publisher-path" (index $e 0)) "backendRefs" (list $b) "matches" (list (dict "path" (dict "type" "PathPrefix" "value" (printf "/publishers/%s/models/%s%s" $ns $model (index $e 1))))) "filters" (list (dict "type" "URLRewrite" "urlRewrite" (dict "path" (dict "type" "ReplacePrefixMatch" "replacePrefixMatch" (index $e 1))))) "timeouts" $timeouts) -}}
{{- end -}}
{{- $root := list (dict "type" "URLRewrite" "urlRewrite" (dict "path" (dict "type" "ReplacePrefixMatch" "replacePrefixMatch" "/"))) -}}
{{- $rules = append $rules (dict "name" "v1-publisher-path-catch-all" "backendRefs" (list $svc) "matches" (list (dict "path" (dict "type" "PathPrefix" "value" (printf "/publishers/%s/models/%s" $ns $model)))) "filters" $root "timeouts" $timeouts) -}}
{{- $rules = append $rules (dict "name" "v1-catch-all-path" "backendRefs" (list $svc) "matches" (list (dict "path" (dict "type" "PathPrefix" "value" (printf "/%s/%s" $ns $v.name)))) "filters" $root "timeouts" $timeouts) -}}
{{- $headerOnly := list (dict "headers" (list (dict "type" "Exact" "name" $header "value" $value))) -}}
{{- range $a := $adapters -}}
{{- $headerOnly = append $headerOnly (dict "headers" (list (dict "type" "Exact" "name" $header "value" (printf "publishers/%s/models/%s" $ns $a)))) -}}
{{- end -}}
{{- $rules = append $rules (dict "name" "v1-catch-all-model-routing" "backendRefs" (list $svc) "matches" $headerOnly "timeouts" $timeouts) -}}
{{- $_ := set $route "rules" $rules -}}
{{- else if $adapters -}}
{{/* kvgen's rule: the path prefix, and one match per adapter's name in the model-name header (as a body-based
router sets it): a route that names the adapters wins over another route on the same Gateway and path */}}
{{- $matches := list -}}
{{- range $a := $adapters -}}
{{- $matches = append $matches (dict "path" (dict "type" "PathPrefix" "value" (default "/" $g.pathPrefix)) "headers" (list (dict "type" "Exact" "name" $header "value" $a))) -}}
{{- end -}}
{{- $_ := set $route "modelMatches" $matches -}}
{{- end -}}
{{- $routing := dict "route" $route "provider" $provider -}}
{{- if $ownPool -}}
{{- $image := $s.plan.images.picker -}}
{{- $selector := dict $key.name "endpoint-picker" $key.instance $s.release.name -}}
{{- $labels := mergeOverwrite (deepCopy $s.meta.labels) $selector (dict $key.component "router" $key.version $rt.image.tag) -}}
{{- $args := list (printf "--pool-name=%s" $pool) (printf "--grpc-port=%d" (int64 $rt.grpcPort)) (printf "--grpc-health-port=%d" (int64 $rt.grpcHealthPort)) (printf "--metrics-port=%d" (int64 $rt.metricsPort)) "--metrics-endpoint-auth=false" "--tracing=false" "--config-file=/config/config.json" -}}
{{- if gt $replicas 1 -}}{{- $args = append $args "--ha-enable-leader-election" -}}{{- end -}}
{{/* the EndpointPickerConfig; with LoRA adapters the lora-affinity-scorer first, weight 4 (kserve aaac4e29 scheduler.go:592-627) */}}
{{- $sc := default dict $picker.scorers -}}
{{- $plugins := list (dict "type" "single-profile-handler") (dict "type" "metrics-data-source" "parameters" (dict "scheme" "http" "path" $s.W.vllmMetricsPath)) (dict "type" "core-metrics-extractor") -}}
{{- $profile := list -}}
{{- if $adapters -}}
{{- $plugins = append $plugins (dict "type" "lora-affinity-scorer") -}}
{{- $profile = append $profile (dict "pluginRef" "lora-affinity-scorer" "weight" (int64 $rt.loraAffinityWeight)) -}}
{{- end -}}
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
{{- if eq (toString (default dict $v.disaggregation).role) "decode" -}}
{{/* a prefill/decode pair: KServe's P/D profiles (kserve aaac4e29 scheduler.go:540-591): every request
prefilled on a prefill server (always-disagg-pd-decider), the decode pod's routing sidecar sending it there
(the picker's prefill header); with LoRA adapters lora-affinity-scorer heads both profiles, weight 4. Beside
KServe's plugins, kvgen's data plugins (the metrics source and extractor, the approximate prefix index). */}}
{{- $index := $s.plan.routing -}}
{{- $producer := dict "type" "approx-prefix-cache-producer" "parameters" (dict "autoTune" false "blockSizeTokens" (int64 $index.blockSizeTokens) "maxPrefixTokensToMatch" (int64 $rt.maxPrefixTokensToMatch) "lruCapacityPerServer" (int64 $index.lruCapacityPerServer)) -}}
{{- $plugins = list (dict "type" "disagg-headers-handler") (dict "type" "metrics-data-source" "parameters" (dict "scheme" "http" "path" $s.W.vllmMetricsPath)) (dict "type" "core-metrics-extractor") (dict "type" "prefill-filter") (dict "type" "decode-filter") (dict "type" "queue-scorer") (dict "type" "kv-cache-utilization-scorer") (dict "type" "active-request-scorer") $producer (dict "type" "prefix-cache-scorer") (dict "type" "max-score-picker") (dict "type" "always-disagg-pd-decider") (dict "type" "disagg-profile-handler" "parameters" (dict "deciders" (dict "prefill" "always-disagg-pd-decider"))) -}}
{{- $lora := list -}}
{{- if $adapters -}}
{{- $plugins = append $plugins (dict "type" "lora-affinity-scorer") -}}
{{- $lora = list (dict "pluginRef" "lora-affinity-scorer" "weight" (int64 $rt.loraAffinityWeight)) -}}
{{- end -}}
{{- $prefill := concat (list (dict "pluginRef" "prefill-filter")) $lora (list (dict "pluginRef" "prefix-cache-scorer" "weight" 3) (dict "pluginRef" "queue-scorer" "weight" 2) (dict "pluginRef" "kv-cache-utilization-scorer" "weight" 2) (dict "pluginRef" "max-score-picker")) -}}
{{- $decode := concat (list (dict "pluginRef" "decode-filter")) $lora (list (dict "pluginRef" "active-request-scorer" "weight" 2) (dict "pluginRef" "prefix-cache-scorer" "weight" 3) (dict "pluginRef" "max-score-picker")) -}}
{{- $config = dict "apiVersion" $rt.configApiVersion "kind" "EndpointPickerConfig" "plugins" $plugins "schedulingProfiles" (list (dict "name" "prefill" "plugins" $prefill) (dict "name" "decode" "plugins" $decode)) -}}
{{- end -}}
{{- $pick := dict "names" $names "replicas" $replicas "image" $image "labels" $labels "podLabels" (mergeOverwrite (deepCopy $s.meta.commonLabels) $selector) "selector" $selector "args" $args "config" (toPrettyJson $config) "leaderElection" (gt $replicas 1) "leases" (or (gt $replicas 1) $kserve) "grpcPort" (int64 $rt.grpcPort) "grpcHealthPort" (int64 $rt.grpcHealthPort) "metricsPort" (int64 $rt.metricsPort) "resources" (deepCopy $rt.resources) -}}
{{/* KServe's EPP Service: the container's ports by their names, sorted (scheduler.go:294-324); the picker serves
no zmq port (KV events) in kvgen's approximate prefix mode */}}
{{/* pod.imagePullSecrets: the picker's image comes from the same registry (images.registry); KServe gives
the scheduler's ServiceAccount the workload's pull secrets (scheduler.go, controller_int_scheduler_config_test.go:1380-1573) */}}
{{- with (default dict $v.pod).imagePullSecrets -}}
{{- $secrets := list -}}{{- range $p := . -}}{{- $secrets = append $secrets (dict "name" $p.name) -}}{{- end -}}
{{- $_ := set $pick "imagePullSecrets" $secrets -}}
{{- end -}}
{{- if $kserve -}}{{- $_ := set $pick "servicePorts" (list (dict "name" "grpc" "port" (int64 $rt.grpcPort) "targetPort" "grpc" "protocol" "TCP") (dict "name" "grpc-health" "port" (int64 $rt.grpcHealthPort) "targetPort" "grpc-health" "protocol" "TCP") (dict "name" "metrics" "port" (int64 $rt.metricsPort) "targetPort" "metrics" "protocol" "TCP")) -}}{{- end -}}
{{- $_ := set $routing "picker" $pick -}}
{{/* a decode server: the pool selects both servers' pods of the pair by the pool label (kvgen.context.meta) */}}
{{- $poolSelector := (index $s.workloads 0).pod.selector -}}
{{- if $s.routingSidecar -}}{{- $poolSelector = dict $s.W.pairLabels.pool $v.name -}}{{- end -}}
{{- $_ := set $routing "pool" (dict "name" $pool "selector" $poolSelector "targetPort" $port "failureMode" (default "FailOpen" $picker.failureMode)) -}}
{{- with $s.routingAccess -}}{{- $_ := set $routing "sidecarAccess" (merge (dict "labels" $s.meta.labels) .) -}}{{- end -}}
{{- if eq $provider "istio" -}}
{{- $host := $names.service -}}
{{- if $v.namespace -}}{{- $host = printf "%s.%s.svc.cluster.local" $names.service $v.namespace -}}{{- end -}}
{{- $_ := set $routing "destinationRule" (dict "name" $names.service "host" $host) -}}
{{- end -}}
{{- if eq $provider "gke" -}}{{- $_ := set $routing "gke" (dict "healthPath" $rt.gke.healthPath "backendTimeoutSec" (int64 $rt.gke.backendTimeoutSec)) -}}{{- end -}}
{{- end -}}
{{- $_ := set $out "routing" $routing -}}
{{- end -}}
{{- $_ := set $s "routing" $out -}}
{{- end -}}
