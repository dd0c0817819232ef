{{/*
routing (docs/routing.md): the chart's counterpart of kvgen/plan/routing.py and of kvgen/context/build.py
routing and picker_config.
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

{{/*
kvgen.context.routing: routing.mode gateway: the InferencePool of the API pods (rank 0 of a multi-node
server), its Endpoint Picker (files/runtime.yaml picker) and the HTTPRoute (kvgen/context/build.py routing).
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
{{- $ref := printf "%s:%s" $rt.image.repository $rt.image.tag -}}
{{- if $rt.image.digest -}}{{- $ref = printf "%s@%s" $rt.image.repository $rt.image.digest -}}{{- end -}}
{{- $image := include "kvgen.relocate" (list $ref (include "kvgen.imageRegistry" $v)) -}}
{{- $selector := dict $key.name "endpoint-picker" $key.instance $s.release.name -}}
{{- $labels := merge (dict $key.component "router" $key.version $rt.image.tag) $selector (deepCopy $s.meta.labels) -}}
{{- $args := list (printf "--pool-name=%s" $pool) (printf "--grpc-port=%d" (int64 $rt.grpcPort)) (printf "--grpc-health-port=%d" (int64 $rt.grpcHealthPort)) (printf "--metrics-port=%d" (int64 $rt.metricsPort)) "--metrics-endpoint-auth=false" "--tracing=false" "--config-file=/config/config.json" -}}
{{- if gt $replicas 1 -}}{{- $args = append $args "--ha-enable-leader-election" -}}{{- end -}}
{{/* the EndpointPickerConfig (kvgen/context/build.py picker_config) */}}
{{- $sc := default dict $picker.scorers -}}
{{- $plugins := list (dict "type" "single-profile-handler") (dict "type" "metrics-data-source" "parameters" (dict "scheme" "http" "path" $s.W.vllmMetricsPath)) (dict "type" "core-metrics-extractor") -}}
{{- $profile := list -}}
{{- range $pair := list (list "queue-scorer" "queue" 2) (list "kv-cache-utilization-scorer" "kvCacheUtilization" 2) (list "prefix-cache-scorer" "prefixCache" 3) (list "no-hit-lru-scorer" "noHitLru" 2) -}}
{{- $kind := index $pair 0 -}}
{{- $weight := include "kvgen.routingValue" (list $sc (index $pair 1) (index $pair 2)) | int64 -}}
{{- if gt $weight 0 -}}
{{- if eq $kind "prefix-cache-scorer" -}}
{{/* the block: routing.picker.blockSizeTokens, else LMCache's chunk with the lmcache backend, else vLLM's block; at least the picker's floor */}}
{{- $block := int64 $s.W.lmcache.chunkSize -}}
{{- if ne (toString $s.backend) "lmcache" -}}{{- $block = int64 $s.C.vllm.blockSize -}}{{- end -}}
{{- $block = max $block (int64 $rt.minBlockSizeTokens) -}}
{{- if include "kvgen.isSet" (list $picker "blockSizeTokens") -}}{{- $block = int64 $picker.blockSizeTokens -}}{{- end -}}
{{/* the capacity: routing.picker.lruCapacityPerServer, else the tokens the GPU KV cache, CPU tier and disk tiers of known size hold, over the block */}}
{{- $capacity := int64 0 -}}
{{- if include "kvgen.isSet" (list $picker "lruCapacityPerServer") -}}{{- $capacity = int64 $picker.lruCapacityPerServer -}}
{{- else -}}
{{- $perToken := mul (int64 $s.context.perToken) (max (int64 $s.gpusPerPod) 1) -}}
{{- $total := int64 0 -}}
{{- if gt (int64 $s.gpusPerPod) 0 -}}{{- $total = mul (include "kvgen.gpuKvBudget" (list $s $s.C) | int64) (int64 $s.gpusPerPod) -}}{{- end -}}
{{- if $s.backend -}}
{{- $total = add $total (int64 $s.size.cpuTier) -}}
{{- range $t := $s.tiers -}}{{- if hasKey $t "capacity" -}}{{- $total = add $total (int64 $t.capacity) -}}{{- end -}}{{- end -}}
{{- end -}}
{{- if gt $perToken 0 -}}{{- $capacity = div (div $total $perToken) $block -}}{{- end -}}
{{- if le $capacity 0 -}}{{- $capacity = int64 $rt.defaultLruCapacityPerServer -}}{{- end -}}
{{- end -}}
{{- $plugins = append $plugins (dict "type" "approx-prefix-cache-producer" "parameters" (dict "autoTune" false "blockSizeTokens" $block "maxPrefixTokensToMatch" (int64 $rt.maxPrefixTokensToMatch) "lruCapacityPerServer" $capacity)) -}}
{{- end -}}
{{- $plugins = append $plugins (dict "type" $kind) -}}
{{- $profile = append $profile (dict "pluginRef" $kind "weight" $weight) -}}
{{- end -}}
{{- end -}}
{{- $plugins = append $plugins (dict "type" "max-score-picker") -}}
{{- $profile = append $profile (dict "pluginRef" "max-score-picker") -}}
{{- $config := dict "apiVersion" $rt.configApiVersion "kind" "EndpointPickerConfig" "plugins" $plugins "schedulingProfiles" (list (dict "name" "default" "plugins" $profile)) -}}
{{- $pick := dict "name" $name "replicas" $replicas "image" $image "labels" $labels "selector" $selector "args" $args "config" (toPrettyJson $config) "leaderElection" (gt $replicas 1) "grpcPort" (int64 $rt.grpcPort) "grpcHealthPort" (int64 $rt.grpcHealthPort) "metricsPort" (int64 $rt.metricsPort) "resources" (deepCopy $rt.resources) -}}
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
{{- if include "kvgen.isSet" (list $g "requestTimeout") -}}{{- $_ := set $route "requestTimeout" $g.requestTimeout -}}{{- end -}}
{{- $poolCtx := dict "name" $pool "selector" (index $s.workloads 0).pod.selector "targetPort" (int64 $v.service.port) "failureMode" (default "FailOpen" $picker.failureMode) -}}
{{- $_ := set $out "routing" (dict "pool" $poolCtx "picker" $pick "route" $route) -}}
{{- end -}}
{{- $_ := set $s "routing" $out -}}
{{- end -}}
