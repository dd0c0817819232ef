{{/*
kvgen.planDocument: the plan as one document, every decision of the values with camelCase keys: the
contract between planning and the layout (kvgen/plan/document.py document writes the same, and the
tests compare the two key by key). An absent value is a key left out. Sets $s.plan.
Usage: {{- include "kvgen.planDocument" $s -}} (after kvgen.plan accepted the values, kvgen.images,
$s.modelCache and $s.modelDir)
*/}}
{{- define "kvgen.planDocument" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $m := $s.model -}}
{{- $i := $s.inst -}}
{{/* the catalog rows as resolved (kvgen.resolveModel, kvgen.resolveInstance) */}}
{{- $model := dict "id" (toString $m.id) "architecture" $m.architecture "layers" (int64 $m.layers) "attentionLayers" (int64 $m.attentionLayers) "kvHeads" (int64 $m.kvHeads) "headDim" (int64 $m.headDim) "mla" $m.mla "hybrid" $m.hybrid "multimodal" $m.multimodal "quantization" $m.quantization "weightsBytes" (int64 $m.weights) "gpuWeightsBytes" (int64 $m.gpuWeights) "kvDtypeBytes" (int64 $m.kvBytes) "slidingLayers" (int64 $m.slidingLayers) -}}
{{- if gt (int64 $m.maxModelLen) 0 -}}{{- $_ := set $model "maxModelLen" (int64 $m.maxModelLen) -}}{{- end -}}
{{- if gt (int64 $m.slidingWindow) 0 -}}{{- $_ := set $model "slidingWindow" (int64 $m.slidingWindow) -}}{{- end -}}
{{- $instance := dict "gpus" (int64 $i.gpus) "gpuMemoryBytes" (int64 $i.gpuMemory) "gpuUsableBytes" (int64 $i.gpuUsable) "memoryBytes" (int64 $i.memory) "arch" $i.arch "localDiskBytes" (int64 $i.localDisk) "ephemeralBytes" (int64 $i.ephemeral) "cloudType" $i.cloudType -}}
{{- range $k, $from := dict "type" "type" "gpuModel" "gpuModel" "mig" "mig" -}}{{- with index $i $from -}}{{- $_ := set $instance $k (toString .) -}}{{- end -}}{{- end -}}
{{- with $i.nodeSelector -}}{{- $_ := set $instance "nodeSelector" . -}}{{- end -}}
{{/* the rules checked (kvgen.decide), the first that matched switching offloading off */}}
{{- $decision := dict "enabled" $s.decision.enabled "rules" $s.decision.rules -}}
{{- if not $s.decision.enabled -}}{{- $_ := set $decision "code" $s.decision.code -}}{{- $_ := set $decision "reason" $s.decision.reason -}}{{- end -}}
{{- $context := dict "perTokenBytes" (int64 $s.context.perToken) -}}
{{- if gt (int64 $s.context.flag) 0 -}}{{- $_ := set $context "flag" (int64 $s.context.flag) -}}{{- end -}}
{{- if not (kindIs "invalid" $s.context.fits) -}}{{- if gt (int64 $s.context.fits) 0 -}}{{- $_ := set $context "fits" (int64 $s.context.fits) -}}{{- end -}}{{- end -}}
{{/* the sizes: each container as rendered (in-container: vLLM's with the server's share), the tiers' known capacities */}}
{{- $z := $s.size -}}
{{- $vllm := $z.vllm -}}
{{- $inContainer := eq (toString $s.gpuAccess.mode) "in-container" -}}
{{- if $inContainer -}}{{- $vllm = include "kvgen.withServer" (list $z.vllm $z.lmcache) | fromJson -}}{{- end -}}
{{- $sizes := dict "vllm" (include "kvgen.sizeDocument" $vllm | fromJson) "shm" (int64 $z.shm) "modelCache" (int64 $z.modelCache) "cpuTier" (int64 $z.cpuTier) -}}
{{- if $s.gpuAccess -}}{{- $_ := set $sizes "lmcacheServer" (include "kvgen.sizeDocument" $z.lmcache | fromJson) -}}{{- end -}}
{{- if not (kindIs "string" $z.l1Cap) -}}{{- $_ := set $sizes "l1Cap" (int64 $z.l1Cap) -}}{{- end -}}
{{- if not (kindIs "string" $z.utilization) -}}{{- $_ := set $sizes "utilization" (float64 $z.utilization) -}}{{- end -}}
{{- $tiers := list -}}
{{- if $s.backend -}}
{{- range $t := $v.kvCacheOffloading.secondary -}}
{{- $fs := $t.fileSystem -}}
{{- $tier := dict -}}
{{- if include "kvgen.isSet" (list $fs "emptyDir") -}}{{- $_ := set $tier "capacity" (include "kvgen.bytes" $fs.emptyDir.size | int64) -}}
{{- else if include "kvgen.isSet" (list $fs.pvc "spec") -}}
{{- if and (kindIs "map" $fs.pvc.spec.resources) (kindIs "map" $fs.pvc.spec.resources.requests) (include "kvgen.isSet" (list $fs.pvc.spec.resources.requests "storage")) -}}
{{- $_ := set $tier "capacity" (include "kvgen.bytes" $fs.pvc.spec.resources.requests.storage | int64) -}}
{{- end -}}
{{- end -}}
{{- $tiers = append $tiers $tier -}}
{{- end -}}
{{- end -}}
{{- $_ := set $sizes "tiers" $tiers -}}
{{- if and $s.modelCache.template (not (include "kvgen.isSet" (list $v.model.cache.claimTemplate "size"))) -}}{{- $_ := set $sizes "weightsClaim" (include "kvgen.weightsClaimSize" $s | int64) -}}{{- end -}}
{{- $_ := set $sizes "startupFailureThreshold" (include "kvgen.startupThreshold" $s | int64) -}}
{{- $rate := mul (int64 $s.C.startup.downloadMiBPerSecond) 1048576 -}}
{{- $_ := set $sizes "downloadSeconds" (div (add (int64 $m.downloadWeights) (sub $rate 1)) $rate) -}}
{{/* the images (kvgen.images): the LMCache sidecar's where the server runs beside vLLM */}}
{{- $images := dict "vllm" $s.images.vllm "vllmTag" (toString $s.images.vllmTag) -}}
{{- with $s.images.vllmPullPolicy -}}{{- $_ := set $images "vllmPullPolicy" . -}}{{- end -}}
{{- if and $s.gpuAccess (not $inContainer) -}}
{{- $_ := set $images "lmcache" $s.images.lmcache -}}
{{- with $s.images.lmcachePullPolicy -}}{{- $_ := set $images "lmcachePullPolicy" . -}}{{- end -}}
{{- end -}}
{{- if eq (default "none" (default dict $v.routing).mode) "gateway" -}}
{{- $pin := $s.rt.picker.image -}}
{{- $ref := printf "%s:%s" $pin.repository $pin.tag -}}
{{- if $pin.digest -}}{{- $ref = printf "%s@%s" $pin.repository $pin.digest -}}{{- end -}}
{{- $_ := set $images "picker" (include "kvgen.relocate" (list $ref (include "kvgen.imageRegistry" $v))) -}}
{{- if eq (toString (default dict $v.disaggregation).role) "decode" -}}
{{- $pin = $s.rt.picker.sidecar.image -}}
{{- $ref = printf "%s:%s" $pin.repository $pin.tag -}}
{{- if $pin.digest -}}{{- $ref = printf "%s@%s" $pin.repository $pin.digest -}}{{- end -}}
{{- $_ := set $images "routingSidecar" (include "kvgen.relocate" (list $ref (include "kvgen.imageRegistry" $v))) -}}
{{- end -}}
{{- end -}}
{{/* the weights: a mounted directory (model.uri, model.cache), downloaded by an init container into a claim */}}
{{- $local := not (not (or $v.model.uri $s.modelCache.on)) -}}
{{- $downloads := and $s.modelCache.on $s.modelCache.download -}}
{{- $weights := dict "local" $local "dir" $s.modelDir "downloads" $downloads "extraArgs" (include "kvgen.servedExtraArgs" $s | fromJsonArray) -}}
{{- if $downloads -}}
{{- $args := list (toString $v.model.id) (printf "--local-dir=%s" $s.modelDir) -}}
{{- range $x := $s.W.modelDownload.exclude -}}{{- $args = append $args (printf "--exclude=%s" $x) -}}{{- end -}}
{{- $rev := include "kvgen.extraArg" (list $v (list "--revision")) -}}
{{- if $rev -}}{{- $args = append $args (printf "--revision=%s" $rev) -}}{{- end -}}
{{- $_ := set $weights "downloadArgs" $args -}}
{{- end -}}
{{- if $s.modelCache.claim -}}{{- $_ := set $weights "cachePath" $s.modelCache.path -}}{{- end -}}
{{- $_ := set $weights "claimTemplate" $s.modelCache.template -}}
{{- $pvcVolume := $s.W.modelPvc.volume -}}
{{- if $v.model.uri -}}
{{- $pvc := include "kvgen.modelPvc" $v | fromJson -}}
{{- $mount := dict "name" $pvcVolume "mountPath" $s.modelDir "readOnly" true -}}
{{- if $pvc.path -}}{{- $_ := set $mount "subPath" $pvc.path -}}{{- end -}}
{{- $_ := set $weights "mount" $mount -}}
{{- $_ := set $weights "volume" (dict "name" $pvcVolume "persistentVolumeClaim" (dict "claimName" $pvc.claim "readOnly" true)) -}}
{{- else if $s.modelCache.on -}}
{{- $mount := dict "name" $pvcVolume "mountPath" $s.modelDir "readOnly" true -}}
{{- if $s.modelCache.claim -}}{{- $_ := set $mount "subPath" $s.modelCache.path -}}{{- end -}}
{{- $_ := set $weights "mount" $mount -}}
{{/* model.cache.claim; a claim template's volume is the StatefulSet's volumeClaimTemplates */}}
{{- if $s.modelCache.claim -}}{{- $_ := set $weights "volume" (dict "name" $pvcVolume "persistentVolumeClaim" (dict "claimName" $s.modelCache.claim)) -}}{{- end -}}
{{- end -}}
{{- $podv := default dict $v.pod -}}
{{- $doc := dict "version" 1 "kubeVersion" (regexFind "[0-9]+\\.[0-9]+" $s.kube) "model" $model "instance" $instance "gpusPerPod" (int64 $s.gpusPerPod) "decision" $decision "contextLength" $context "sizes" $sizes "images" $images "weights" $weights -}}
{{- $_ := set $doc "tolerations" (include "kvgen.gpuAccessTolerations" $s | fromJsonArray) -}}
{{- $_ := set $doc "podSecurityContext" (include "kvgen.securityContext" (list $s.rt.securityContext.pod (default dict $podv.securityContext)) | fromJson) -}}
{{- $_ := set $doc "containerSecurityContext" (include "kvgen.securityContext" (list $s.rt.securityContext.container (default dict $podv.containerSecurityContext)) | fromJson) -}}
{{- $sa := default dict $podv.serviceAccount -}}
{{- with default (ternary $v.name "" (default false $sa.create)) $sa.name -}}{{- $_ := set $doc "serviceAccountName" . -}}{{- end -}}
{{- with $s.backend -}}{{- $_ := set $doc "backend" . -}}{{- end -}}
{{- if $s.gpuAccess -}}
{{- $access := dict "mode" $s.gpuAccess.mode "summary" $s.gpuAccess.summary "requirement" $s.gpuAccess.requirement "claimName" "gpus" "env" (include "kvgen.gpuAccessEnv" $s | fromJsonArray) -}}
{{/* the memory the launcher leaves to others in its cgroup: the server's process, and vLLM's in-container */}}
{{- $reserve := mul (int64 $s.C.lmcache.serverOverheadGiB) 1073741824 -}}
{{- if $inContainer -}}{{- $reserve = add $reserve (int64 $z.vllm.limit) -}}{{- end -}}
{{- $_ := set $sizes "launcherReserve" $reserve -}}
{{- with $s.gpuAccess.deviceClassName -}}{{- $_ := set $access "deviceClassName" . -}}{{- end -}}
{{- $_ := set $doc "gpuAccess" $access -}}
{{- end -}}
{{- $r := default dict $v.routing -}}
{{- if and (eq (default "none" $r.mode) "gateway") (gt (include "kvgen.routingValue" (list (default dict (default dict $r.picker).scorers) "prefixCache" 3) | int64) 0) -}}
{{- $_ := set $doc "routing" (include "kvgen.pickerIndex" (list $s $sizes) | fromJson) -}}
{{- end -}}
{{- if kindIs "map" $v.model.lora -}}{{- $_ := set $doc "lora" (include "kvgen.planLora" $s | fromJson) -}}{{- end -}}
{{- if include "kvgen.isSet" (list $v.kvCacheOffloading "remote") -}}
{{- $_ := set $doc "remote" (dict "adapter" (include "kvgen.remoteAdapter" $s | fromJson) "env" (include "kvgen.remoteEnv" $s | fromJsonArray)) -}}
{{- end -}}
{{- $_ := set $doc "warnings" (default list $s.warnings) -}}
{{- $_ := set $doc "problems" list -}}
{{- $_ := set $s "plan" $doc -}}
{{- end -}}

{{/* kvgen.sizeDocument: a container's size (kvgen.container) as the plan document has it: cpu left out when none */}}
{{- define "kvgen.sizeDocument" -}}
{{- $out := dict "memory" (int64 .memory) "limit" (int64 .limit) "ephemeral" (int64 .ephemeral) -}}
{{- with .cpu -}}{{- $_ := set $out "cpu" (toString .) -}}{{- end -}}
{{- if hasKey . "cpuLimit" -}}{{- $_ := set $out "cpuLimit" (toString .cpuLimit) -}}{{- end -}}
{{- if hasKey . "ephemeralLimit" -}}{{- $_ := set $out "ephemeralLimit" (int64 .ephemeralLimit) -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.servedExtraArgs: vllm.extraArgs as vLLM gets them: model.cache downloads --revision, and the
local directory has none (kvgen/plan/model_source.py without_revision). A JSON list. */}}
{{- define "kvgen.servedExtraArgs" -}}
{{- $s := . -}}
{{- $out := list -}}
{{- if $s.modelCache.on -}}
{{- $skip := false -}}
{{- range $a := default list $s.V.vllm.extraArgs -}}
{{- if $skip -}}{{- $skip = false -}}
{{- else if eq (replace "_" "-" (splitn "=" 2 (toString $a))._0) "--revision" -}}{{- $skip = not (contains "=" (toString $a)) -}}
{{- else -}}{{- $out = append $out $a -}}{{- end -}}
{{- end -}}
{{- else -}}
{{- $out = default list $s.V.vllm.extraArgs -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
kvgen.pickerIndex: routing.mode gateway with the prefix-cache scorer: the picker's prefix index
(kvgen/plan/routing.py block_size_tokens, lru_capacity), as JSON {blockSizeTokens, lruCapacityPerServer}.
Usage: include "kvgen.pickerIndex" (list $s $sizes) | fromJson ($sizes: the plan document's sizes)
*/}}
{{- define "kvgen.pickerIndex" -}}
{{- $s := index . 0 -}}{{- $sizes := index . 1 -}}
{{- $rt := $s.rt.picker -}}
{{- $picker := default dict (default dict $s.V.routing).picker -}}
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
{{- range $t := $sizes.tiers -}}{{- if hasKey $t "capacity" -}}{{- $total = add $total (int64 $t.capacity) -}}{{- end -}}{{- end -}}
{{- end -}}
{{- if gt $perToken 0 -}}{{- $capacity = div (div $total $perToken) $block -}}{{- end -}}
{{- if le $capacity 0 -}}{{- $capacity = int64 $rt.defaultLruCapacityPerServer -}}{{- end -}}
{{- end -}}
{{- toJson (dict "blockSizeTokens" $block "lruCapacityPerServer" $capacity) -}}
{{- end -}}

{{/*
kvgen.planJson: the plan document of this render as JSON ({} when the values have problems): what
kvgen explain -o json prints as plan. Computed with the context (kvgen.context), once per render.
Usage: {{ include "kvgen.planJson" . }}
*/}}
{{- define "kvgen.planJson" -}}
{{- $_ := include "kvgen.context" . -}}
{{- toJson (default dict (index . "kvgen.plan (the plan document of this render)")) -}}
{{- end -}}

{{/*
kvgen.securityContext: a securityContext from kvgen's default (files/runtime.yaml
securityContext) and the spec's, as JSON: the spec's keys win, maps merge key by key, lists and
scalars are replaced (kvgen/plan/pod_settings.py merge; a securityContext nests maps two deep).
Usage: {{- include "kvgen.securityContext" (list $default $spec) | fromJson -}}
*/}}
{{- define "kvgen.securityContext" -}}
{{- $out := deepCopy (index . 0) -}}
{{- range $k, $val := index . 1 -}}
{{- if and (kindIs "map" $val) (kindIs "map" (index $out $k)) -}}
{{- $m := index $out $k -}}
{{- range $k2, $v2 := $val -}}{{- $_ := set $m $k2 $v2 -}}{{- end -}}
{{- else -}}
{{- $_ := set $out $k $val -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
