{{/*
kvgen.size: the chart's counterpart of kvgen/plan/sizing.py. Every constant comes from
files/sizing.yaml (with its source). Arithmetic follows kvgen's step by step (same float
operations, same order, same truncation) so that both give the same bytes.
*/}}

{{/* kvgen.allocatable: node memory the kubelet leaves to pods, from bytes of RAM. */}}
{{- define "kvgen.allocatable" -}}
{{- $mem := float64 (index . 0) -}}
{{- $C := index . 1 -}}
{{- $reserved := 0.0 -}}
{{- $left := $mem -}}
{{- range $b := $C.kubeReserved.bands -}}
{{- $take := $left -}}
{{- if not (kindIs "invalid" $b.gib) -}}{{- $take = minf $left (mulf $b.gib 1073741824.0) -}}{{- end -}}
{{- $reserved = addf $reserved (mulf $take $b.share) -}}
{{- $left = subf $left $take -}}
{{- end -}}
{{- sub (sub (int64 $mem) (ceil $reserved | int64)) (mul (int64 $C.kubeReserved.evictionThresholdMiB) 1048576) -}}
{{- end -}}

{{/* kvgen.container: computed sizes with the explicit spec values applied (kvgen/plan/sizing.py _apply_overrides),
and its warnings when they look too small. Usage: include "kvgen.container" (list $computed $res.vllm "vllm") | fromJson */}}
{{- define "kvgen.container" -}}
{{- $computed := index . 0 -}}
{{- $explicit := index . 1 -}}
{{- $name := index . 2 -}}
{{- $req := default dict $explicit.requests -}}
{{- $lim := default dict $explicit.limits -}}
{{- $memory := int64 $computed.memory -}}
{{- if include "kvgen.isSet" (list $req "memory") -}}
{{- $memory = include "kvgen.bytes" $req.memory | int64 -}}
{{- else if include "kvgen.isSet" (list $lim "memory") -}}
{{- $memory = min (int64 $computed.memory) (include "kvgen.bytes" $lim.memory | int64) -}}
{{- end -}}
{{- $limit := max $memory (int64 $computed.memory) -}}
{{- if include "kvgen.isSet" (list $lim "memory") -}}{{- $limit = include "kvgen.bytes" $lim.memory | int64 -}}{{- end -}}
{{/* a computed request never exceeds an explicit limit (the API server refuses it): lowered to it */}}
{{- $eph := int64 $computed.ephemeral -}}
{{- if include "kvgen.isSet" (list $req "ephemeral-storage") -}}{{- $eph = include "kvgen.bytes" (index $req "ephemeral-storage") | int64 -}}
{{- else if include "kvgen.isSet" (list $lim "ephemeral-storage") -}}{{- $eph = min $eph (include "kvgen.bytes" (index $lim "ephemeral-storage") | int64) -}}
{{- end -}}
{{- $cpu := $computed.cpu -}}
{{- if include "kvgen.isSet" (list $req "cpu") -}}{{- $cpu = toString $req.cpu -}}
{{- else if and (include "kvgen.isSet" (list $lim "cpu")) (gt (include "kvgen.cpuF" $cpu | float64) (include "kvgen.cpuF" $lim.cpu | float64)) -}}{{- $cpu = toString $lim.cpu -}}
{{- end -}}
{{- $out := dict "cpu" $cpu "memory" $memory "limit" $limit "ephemeral" $eph -}}
{{- if include "kvgen.isSet" (list $lim "cpu") -}}{{- $_ := set $out "cpuLimit" (toString $lim.cpu) -}}{{- end -}}
{{- if include "kvgen.isSet" (list $lim "ephemeral-storage") -}}{{- $_ := set $out "ephemeralLimit" (include "kvgen.bytes" (index $lim "ephemeral-storage") | int64) -}}{{- end -}}
{{- $warnings := list -}}
{{- if lt $limit (int64 $computed.memory) -}}
{{- $warnings = append $warnings (printf "resources.%s: memory limit %s is below the %s kvgen computes for this container; it may be OOM-killed" $name (include "kvgen.formatBytes" $limit) (include "kvgen.formatBytes" $computed.memory)) -}}
{{- end -}}
{{- if and (or (include "kvgen.isSet" (list $req "ephemeral-storage")) (include "kvgen.isSet" (list $lim "ephemeral-storage"))) (lt $eph (int64 $computed.ephemeral)) -}}
{{- $warnings = append $warnings (printf "resources.%s: ephemeral-storage %s is below the %s of its emptyDir volumes; the kubelet may evict the pod" $name (include "kvgen.formatBytes" $eph) (include "kvgen.formatBytes" $computed.ephemeral)) -}}
{{- end -}}
{{- $_ := set $out "warnings" $warnings -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.extraArg: the value vllm.extraArgs gives one of the option names (--name=value or --name value,
underscores read as dashes; the last one wins), "" when none (kvgen/plan/sizing.py extra_arg).
Usage: include "kvgen.extraArg" (list $v (list "--api-server-count" "-asc")) */}}
{{- define "kvgen.extraArg" -}}
{{- $args := default list (index . 0).vllm.extraArgs -}}
{{- $names := index . 1 -}}
{{- $found := "" -}}
{{- range $n, $arg := $args -}}
{{- $parts := splitn "=" 2 (toString $arg) -}}
{{- if has ($parts._0 | replace "_" "-") $names -}}
{{- if eq (len $parts) 2 -}}{{- $found = $parts._1 -}}
{{- else if lt (add $n 1) (len $args) -}}{{- $found = toString (index $args (add $n 1)) -}}
{{- else -}}{{- $found = "" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $found -}}
{{- end -}}

{{/* kvgen.mmCache: vLLM's multimodal processor cache of a model that takes images (kvgen/plan/sizing.py
mm_processor_cache), as JSON {total, inShm}: --mm-processor-cache-gb (default files/sizing.yaml
multimodal), times the processes holding one (the API servers: --api-server-count, by default
parallelism.data; at least one), in /dev/shm with --mm-processor-cache-type shm when one API server
and no data parallelism let vLLM share it. Usage: include "kvgen.mmCache" (list $v $m $C) | fromJson */}}
{{- define "kvgen.mmCache" -}}
{{- $v := index . 0 -}}{{- $m := index . 1 -}}{{- $C := index . 2 -}}
{{- $out := dict "total" 0 "inShm" false -}}
{{- if $m.multimodal -}}
{{- $mmGiB := float64 $C.multimodal.processorCacheGiB -}}
{{- $value := include "kvgen.extraArg" (list $v (list "--mm-processor-cache-gb")) -}}
{{- if regexMatch "^[0-9]+(\\.[0-9]*)?$|^\\.[0-9]+$" $value -}}{{- $mmGiB = float64 $value -}}{{- end -}}
{{- $size := mulf $mmGiB 1073741824.0 | int64 -}}
{{- if gt $size 0 -}}
{{- $holders := int64 $v.parallelism.data -}}
{{- $servers := include "kvgen.extraArg" (list $v (list "--api-server-count" "-asc")) -}}
{{- if regexMatch "^[0-9]+$" $servers -}}{{- $holders = int64 $servers -}}{{- end -}}
{{- $holders = max 1 $holders -}}
{{- $ipc := and (eq $holders 1) (eq (int64 $v.parallelism.data) 1) -}}
{{- $out = dict "total" (mul $size $holders) "inShm" (and $ipc (eq (include "kvgen.extraArg" (list $v (list "--mm-processor-cache-type"))) "shm")) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{- define "kvgen.size" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $p := $v.parallelism -}}
{{- $res := $v.resources -}}
{{- $i := $s.inst -}}
{{- $m := $s.model -}}
{{- $C := $s.F.Get "files/sizing.yaml" | fromYaml -}}
{{- $GiB := 1073741824 -}}
{{- $MiB := 1048576 -}}
{{- $gpus := int64 $s.gpusPerPod -}}
{{- $tp := int64 $p.tensor -}}
{{/* what the pod's RAM x cpuMemoryUtilization is divided by: 1, or the tensor-parallel size for utilizationScope rank (kvgen/plan/sizing.py utilization_divisor) */}}
{{- $utilDivisor := ternary $tp (int64 1) (eq $o.lmcache.utilizationScope "rank") -}}

{{- $share := 1.0 -}}
{{- if gt $i.gpus 0 -}}{{- $share = divf $gpus $i.gpus -}}{{- end -}}
{{/* memory 0: the node is unknown (kvgen.resolveInstance); gpuMemory 0 with GPUs: their memory is */}}
{{- $nodeKnown := gt $i.memory 0 -}}
{{- $gpuMemoryKnown := or (eq $i.gpus 0) (gt $i.gpuMemory 0) -}}
{{- $nodeAlloc := int64 0 -}}
{{- if $nodeKnown -}}{{- $nodeAlloc = include "kvgen.allocatable" (list $i.memory $C) | int64 -}}{{- end -}}
{{- $podAlloc := mulf $nodeAlloc $share | int64 -}}
{{- $weightsPerNode := divf $m.weights (int64 $p.nodes) -}}
{{- $backend := $s.backend -}}

{{/* disk tiers (only when offloading is on) */}}
{{- $tiersEph := int64 0 -}}
{{- if $backend -}}
{{- range $t := $o.secondary -}}
{{- if include "kvgen.isSet" (list $t.fileSystem "emptyDir") -}}
{{- $tiersEph = add $tiersEph (include "kvgen.bytes" $t.fileSystem.emptyDir.size | int64) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* the CPU tier */}}
{{- $cpuTier := int64 0 -}}
{{- $l1Cap := "" -}}
{{- $utilization := "" -}}
{{- $hasCpu := include "kvgen.isSet" (list $o "cpu") -}}
{{- $hasUtil := include "kvgen.isSet" (list $o "cpuMemoryUtilization") -}}
{{- if eq $backend "native" -}}
{{- $cpuTier = include "kvgen.bytes" $o.cpu | int64 -}}
{{- else if eq $backend "lmcache" -}}
{{- if $hasCpu -}}{{- $l1Cap = include "kvgen.bytes" $o.cpu | int64 -}}{{- end -}}
{{- if and $hasCpu (not $hasUtil) -}}
{{- $cpuTier = $l1Cap -}}
{{- else -}}
{{- $utilization = $C.lmcache.defaultCpuMemoryUtilization -}}
{{- if $hasUtil -}}{{- $utilization = $o.cpuMemoryUtilization -}}{{- end -}}
{{- if not $nodeKnown -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.cpuMemoryUtilization" "the lmcache backend sizes its CPU tier as a share of the node's RAM, and the spec names no node" "set instance.type (or instance.memory), or an absolute kvCacheOffloading.cpu without cpuMemoryUtilization") -}}
{{- end -}}
{{- $cpuTier = divf (mulf $podAlloc $utilization) $utilDivisor | int64 -}}
{{- if $hasCpu -}}{{- $cpuTier = min $cpuTier $l1Cap -}}{{- end -}}
{{- end -}}
{{- $cpuTier = mul (div $cpuTier $MiB) $MiB -}}
{{- end -}}

{{/* /dev/shm */}}
{{- $shmBase := add (mul (int64 $C.shm.baseGiB) $GiB) (mul (mul (int64 $C.shm.perExtraGpuGiB) $GiB) (max 0 (sub $gpus 1))) -}}
{{- $factor := $C.native.cpuTierFactor -}}
{{- if $m.hybrid -}}{{- $factor = $C.native.hybridCpuTierFactor -}}{{- end -}}
{{- $shm := $shmBase -}}
{{- if eq $backend "native" -}}{{- $shm = add $shm (mulf $cpuTier $factor | int64) -}}{{- end -}}
{{- $mm := include "kvgen.mmCache" (list $v $m $C) | fromJson -}}
{{- if $mm.inShm -}}{{- $shm = add $shm (int64 $mm.total) -}}{{- end -}}
{{- $shm = include "kvgen.roundUpGiB" $shm | int64 -}}
{{- if include "kvgen.isSet" (list $res "shm") -}}{{- $shm = include "kvgen.bytes" $res.shm | int64 -}}{{- end -}}

{{/* model cache: every node downloads the whole checkpoint; nothing is downloaded from a claim (model.uri, model.cache) */}}
{{- $downloaded := ternary 0 (add $m.downloadWeights (include "kvgen.loraDownloadBytes" (list $v $m $C) | int64)) (or (not (empty $v.model.uri)) (kindIs "map" $v.model.cache)) -}}
{{- $modelCache := include "kvgen.roundUpGiB" (add $downloaded (mul (int64 $C.modelCache.headroomGiB) $GiB)) | int64 -}}
{{- if include "kvgen.isSet" (list $res "modelCache") -}}{{- $modelCache = include "kvgen.bytes" $res.modelCache | int64 -}}{{- end -}}

{{/* the vLLM container */}}
{{- $vllmMem := 0.0 -}}
{{- if gt $i.gpus 0 -}}
{{/* the weights' page cache is soft memory (reclaimable): not requested on a GPU node */}}
{{- $vllmMem = add (mul (int64 $C.vllm.podOverheadGiB) $GiB) (mul (mul (int64 $C.vllm.perGpuOverheadGiB) $GiB) $gpus) | float64 -}}
{{- else -}}
{{- $vllmMem = add (add (mul (int64 $C.vllm.podOverheadGiB) $GiB) $m.weights) (mul (int64 $C.vllm.cpuBackendKvSpaceGiB) $GiB) | float64 -}}
{{- end -}}
{{/* the multimodal processor cache, in each process holding one, or once in /dev/shm (kvgen/plan/sizing.py mm_processor_cache) */}}
{{- if gt (int64 $mm.total) 0 -}}{{- $vllmMem = addf $vllmMem (int64 $mm.total) -}}{{- end -}}
{{/* model.lora: maxCpuLoras adapters in every worker's pinned memory (kvgen.loraHostBytes) */}}
{{- $loraHost := include "kvgen.loraHostBytes" (list $v $m $C (max 1 $gpus)) | int64 -}}
{{- if gt $loraHost 0 -}}{{- $vllmMem = addf $vllmMem $loraHost -}}{{- end -}}
{{- $vllmMem = addf $vllmMem $shmBase -}}
{{- if eq $backend "native" -}}{{- $vllmMem = addf $vllmMem (mulf $cpuTier $factor) -}}{{- end -}}
{{- $vllmMem = include "kvgen.roundUpGiB" $vllmMem | int64 -}}
{{- $cpuReq := add (int64 $C.vllm.cpuBase) (mul (int64 $C.vllm.cpuPerGpu) $gpus) -}}
{{- if gt $i.cpu 0 -}}
{{- $cpuReq = min $cpuReq (max 1 (mulf (mulf $i.cpu $share) $C.vllm.cpuRequestCeiling | int64)) -}}
{{- end -}}
{{- $vllmEph := $modelCache -}}
{{- if eq $backend "native" -}}{{- $vllmEph = add $vllmEph $tiersEph -}}{{- end -}}
{{- $vllm := include "kvgen.container" (list (dict "cpu" (toString $cpuReq) "memory" $vllmMem "ephemeral" $vllmEph) $res.vllm "vllm") | fromJson -}}

{{/* the LMCache sidecar */}}
{{- $lmcache := dict -}}
{{- if eq $backend "lmcache" -}}
{{- $lmMem := include "kvgen.roundUpGiB" (add $cpuTier (mul (int64 $C.lmcache.serverOverheadGiB) $GiB)) | int64 -}}
{{- $lmcache = include "kvgen.container" (list (dict "cpu" (toString $C.lmcache.serverCpu) "memory" $lmMem "ephemeral" $tiersEph) $res.lmcacheServer "lmcacheServer") | fromJson -}}
{{- end -}}

{{/* does it fit the node? (kvgen/plan/sizing.py _check_fit: the same words) */}}
{{- $where := default "the instance" $i.type -}}
{{- $podMem := int64 $vllm.memory -}}
{{- if $lmcache -}}{{- $podMem = add $podMem (int64 $lmcache.memory) -}}{{- end -}}
{{- if and $nodeKnown (gt $podMem $podAlloc) -}}
{{- $lead := printf "the pod needs %.1f GiB of memory (vLLM %.1f GiB" (divf $podMem 1073741824.0) (divf $vllm.memory 1073741824.0) -}}
{{- if $lmcache -}}{{- $lead = printf "%s, LMCache server %.1f GiB" $lead (divf $lmcache.memory 1073741824.0) -}}{{- end -}}
{{- $shareText := "" -}}
{{- if lt $share 1.0 -}}{{- $shareText = printf " (%d of its %d GPUs)" $gpus $i.gpus -}}{{- end -}}
{{- $message := printf "%s) but %s leaves %.1f GiB to it%s" $lead $where (divf $podAlloc 1073741824.0) $shareText -}}
{{- $path := "instance.type" -}}
{{- $hint := "pick an instance with more RAM, or lower resources.*.memory" -}}
{{- if and $backend (gt $cpuTier 0) -}}
{{- $room := sub $podAlloc (sub $podMem $cpuTier) -}}
{{- $path = "kvCacheOffloading.cpu" -}}
{{- if eq $backend "native" -}}
{{- $hint = printf "lower kvCacheOffloading.cpu to at most %s, or pick an instance with more RAM" (include "kvgen.formatBytes" (mul (div (max 0 $room) $GiB) $GiB)) -}}
{{- else if and (not (kindIs "string" $utilization)) (not $hasCpu) -}}
{{- $path = "kvCacheOffloading.cpuMemoryUtilization" -}}
{{/* the largest share (in hundredths) whose tier fits beside vLLM (kvgen/plan/sizing.py _utilization_hint) */}}
{{- $left := sub $podAlloc (int64 $vllm.memory) -}}
{{- $tier := sub (mul (div $left $GiB) $GiB) (mul (int64 $C.lmcache.serverOverheadGiB) $GiB) -}}
{{- $hundredths := int64 0 -}}
{{- if gt $tier 0 -}}{{- $hundredths = div (mul $tier $utilDivisor 100) $podAlloc -}}{{- end -}}
{{- if gt $hundredths 0 -}}
{{- $hint = printf "set kvCacheOffloading.cpuMemoryUtilization to %d.%02d (the largest share that fits), or pick an instance with more RAM" (div $hundredths 100) (mod $hundredths 100) -}}
{{- else if ge $left 0 -}}
{{- $hint = printf "set kvCacheOffloading.enabled to false (vLLM leaves %.1f GiB, too little for the LMCache server and a CPU tier), or pick an instance with more RAM" (divf (max 0 $left) 1073741824.0) -}}
{{- else -}}
{{- $hint = "pick an instance with more RAM, or lower resources.*.memory" -}}
{{- end -}}
{{- else -}}
{{- $hint = printf "lower kvCacheOffloading.cpu to at most %s, or pick an instance with more RAM" (include "kvgen.formatBytes" (mul (div (max 0 (sub $room (mul (int64 $C.lmcache.serverOverheadGiB) $GiB))) $GiB) $GiB)) -}}
{{- end -}}
{{- end -}}
{{- include "kvgen.problem" (list $s $path $message $hint) -}}
{{- end -}}
{{- $podEph := int64 $vllm.ephemeral -}}
{{- if $lmcache -}}{{- $podEph = add $podEph (int64 $lmcache.ephemeral) -}}{{- end -}}
{{/* ephemeral storage: the kubelet's disk (the OS disk of a default node pool, or instance.ephemeralStorage) less its 10% eviction threshold */}}
{{- $ephAlloc := sub $i.ephemeral (div (mul $i.ephemeral (int64 $C.ephemeral.evictionPercent)) 100) -}}
{{- if and (gt $i.ephemeral 0) (gt (float64 $podEph) (mulf $ephAlloc $share)) -}}
{{- $shareText := "" -}}
{{- if lt $share 1.0 -}}{{- $shareText = printf ", %d of its %d GPUs" $gpus $i.gpus -}}{{- end -}}
{{- $msg := printf "the pod needs %.1f GiB of ephemeral storage (model cache %.1f GiB, emptyDir tiers %.1f GiB) but the kubelet of %s has %.1f GiB for it (%.1f GiB: %s, less the kubelet's 10%% eviction threshold%s); the pod would stay Pending" (divf $podEph 1073741824.0) (divf $modelCache 1073741824.0) (divf $tiersEph 1073741824.0) $where (divf (mulf $ephAlloc $share | int64) 1073741824.0) (divf $i.ephemeral 1073741824.0) (ternary "instance.ephemeralStorage" "the OS disk of a default node pool" $i.ephemeralExplicit) $shareText -}}
{{- if gt $tiersEph 0 -}}
{{- $nvme := "" -}}
{{- if gt $i.localDisk 0 -}}{{- $nvme = printf " (%s has %.1f GiB of local NVMe)" $where (divf $i.localDisk 1073741824.0) -}}{{- end -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.secondary" $msg (printf "move the emptyDir tiers to a pvc.spec tier on a local-NVMe storage class%s, or set instance.ephemeralStorage if the node pool puts the kubelet on NVMe" $nvme)) -}}
{{- else -}}
{{/* the smallest whole-GiB disk that holds the pod (kvgen/plan/sizing.py _least_disk) */}}
{{- $need := $podEph -}}
{{- if and (gt $i.gpus 0) (gt $gpus 0) -}}{{- $need = div (add (mul $podEph $i.gpus) (sub $gpus 1)) $gpus -}}{{- end -}}
{{- $unit := mul (sub 100 (int64 $C.ephemeral.evictionPercent)) $GiB -}}
{{- $disk := mul (div (add (mul $need 100) (sub $unit 1)) $unit) $GiB -}}
{{- if lt (sub $disk (div (mul $disk (int64 $C.ephemeral.evictionPercent)) 100)) $need -}}{{- $disk = add $disk $GiB -}}{{- end -}}
{{- $least := include "kvgen.formatBytes" $disk -}}
{{- include "kvgen.problem" (list $s "instance.ephemeralStorage" $msg (printf "give the node pool an OS disk of at least %s (or a pool that puts the kubelet on NVMe) and set instance.ephemeralStorage to %s, or pick an instance with fewer GPUs per node" $least $least)) -}}
{{- end -}}
{{- end -}}
{{- if and (gt $i.gpus 0) $gpuMemoryKnown -}}
{{- $perGpuWeights := divf $m.gpuWeights (mul $tp (int64 $p.pipeline)) -}}
{{- $usable := mulf $i.gpuUsable $v.vllm.gpuMemoryUtilization -}}
{{- $gpuOverhead := mulf $C.gpu.baseOverheadGiB $GiB | int64 -}}
{{- if gt (addf $perGpuWeights $gpuOverhead) $usable -}}
{{/* the smallest tensor-parallel size they fit at, else the largest catalog model that fits (kvgen/plan/sizing.py _weights_hint) */}}
{{- $pp := int64 $p.pipeline -}}
{{- $hint := "" -}}
{{- $t := mul $tp 2 -}}
{{- range $_ := until 16 -}}
{{- if and (not $hint) (le (mul $t $pp) (int64 $i.gpus)) -}}
{{- if le (addf (divf $m.gpuWeights (mul $t $pp)) $gpuOverhead) $usable -}}
{{- $hint = printf "set parallelism.tensor to %d, or pick an instance with larger GPUs" $t -}}
{{- end -}}
{{- $t = mul $t 2 -}}
{{- end -}}
{{- end -}}
{{- if not $hint -}}
{{- $models := ($s.F.Get "files/models.yaml" | fromYaml).models -}}
{{- with $v.catalog -}}{{- with .models -}}{{- $models = merge (deepCopy .) $models -}}{{- end -}}{{- end -}}
{{- $best := "" -}}{{- $bestBytes := int64 0 -}}
{{- range $mid := keys $models | sortAlpha -}}
{{- $row := index $models $mid -}}
{{- if and (ne $mid $m.id) (include "kvgen.isSet" (list $row "weights")) -}}
{{- $size := include "kvgen.bytes" $row.weights | int64 -}}
{{- if and (gt $size $bestBytes) (le (divf $size (mul $tp $pp)) (mulf $usable $C.gpu.fittingModelShare)) -}}
{{- $best = $mid -}}{{- $bestBytes = $size -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $best -}}
{{- $hint = printf "set model.id to %s (the largest catalog model whose %s of weights leave room for a KV cache), or pick an instance with larger GPUs" $best (include "kvgen.formatBytes" $bestBytes) -}}
{{- else -}}
{{- $hint = "raise parallelism.tensor or parallelism.pipeline, or pick an instance with larger GPUs" -}}
{{- end -}}
{{- end -}}
{{- include "kvgen.problem" (list $s "parallelism.tensor" (printf "%s needs %.1f GiB of weights per GPU at tensor %d x pipeline %d, but a GPU of %s offers %.1f GiB (gpuMemoryUtilization %s)" $m.id (divf ($perGpuWeights | int64) 1073741824.0) $tp (int64 $p.pipeline) $where (divf ($usable | int64) 1073741824.0) (include "kvgen.number" $v.vllm.gpuMemoryUtilization)) $hint) -}}
{{- end -}}
{{- end -}}

{{/* warnings (kvgen/plan/sizing.py _apply_overrides and _advise, in that order) */}}
{{- $warnings := concat $vllm.warnings (default list $lmcache.warnings) -}}
{{- if $backend -}}
{{- $gpuKv := mul (include "kvgen.gpuKvBudget" (list $s $C) | int64) $gpus -}}
{{- if and (gt $gpus 0) (le $cpuTier $gpuKv) -}}
{{- $warnings = append $warnings (printf "the CPU tier (%.1f GiB) is not larger than the GPU KV cache (~%.1f GiB); offloading then mostly mirrors what the GPU already holds" (divf $cpuTier 1073741824.0) (divf $gpuKv 1073741824.0)) -}}
{{- end -}}
{{- $emptyDir := false -}}
{{- range $t := $o.secondary -}}{{- if include "kvgen.isSet" (list $t.fileSystem "emptyDir") -}}{{- $emptyDir = true -}}{{- end -}}{{- end -}}
{{- if and (eq $backend "native") $emptyDir -}}
{{- $warnings = append $warnings "vLLM's fs tier has no size bound: when it outgrows an emptyDir's sizeLimit the kubelet evicts the pod; size the emptyDir generously or use a pvc tier" -}}
{{- end -}}
{{- end -}}
{{/* the OS disk of a default node pool, relied on for more than half of its room (kvgen/plan/sizing.py _pool_disk_warning) */}}
{{- $room := mulf $ephAlloc $share -}}
{{- if and (gt $i.ephemeral 0) (not $i.ephemeralExplicit) (lt (divf $room 2.0) (float64 $podEph)) (le (float64 $podEph) $room) -}}
{{- $warnings = append $warnings (printf "the pod's %.1f GiB of ephemeral storage is %.0f%% of what the kubelet of %s has for it (%.1f GiB), taken from the OS disk of a default node pool (%.1f GiB); on a node pool with a smaller OS disk the pod stays Pending: set instance.ephemeralStorage to your node pool's" (divf $podEph 1073741824.0) (mulf (divf (float64 $podEph) $room) 100.0) $where (divf ($room | int64) 1073741824.0) (divf $i.ephemeral 1073741824.0)) -}}
{{- end -}}
{{/* an unknown node: the fit checks above were skipped (kvgen/plan/sizing.py size) */}}
{{- $unchecked := list -}}
{{- if not $nodeKnown -}}{{- $unchecked = append $unchecked "memory" -}}{{- end -}}
{{- if not $gpuMemoryKnown -}}{{- $unchecked = append $unchecked "GPU memory" -}}{{- end -}}
{{- if $unchecked -}}
{{- $warnings = append $warnings (printf "node fit not checked: the instance gives no %s, so kvgen cannot check that the pod fits its node%s; name the node with instance.type (or describe it: memory, gpuMemory)" (join " and no " $unchecked) (ternary "" " or that the weights fit the GPUs" $gpuMemoryKnown)) -}}
{{- end -}}
{{- $_ := set $s "size" (dict "cpuTier" $cpuTier "l1Cap" $l1Cap "utilization" $utilization "shm" $shm "modelCache" $modelCache "vllm" $vllm "lmcache" $lmcache "warnings" $warnings) -}}
{{- end -}}

{{/*
kvgen.gpuKvBudget: the KV-cache bytes planned on ONE GPU (kvgen/plan/sizing.py gpu_kv_budget): GPU
memory as the device reports it (inst.gpuUsable) x gpuMemoryUtilization (in parts per million), less what
vLLM 0.33's profiling charges outside the KV cache on its busiest GPU (kvgen.gpuNonKv), times 90%; a model
without the geometry: less the weights per GPU and KAITO's overhead (2.3 GiB + 5% of those weights).
Integer arithmetic, as in kvgen.
*/}}
{{- define "kvgen.gpuKvBudget" -}}
{{- $s := index . 0 -}}{{- $C := index . 1 -}}
{{- $i := $s.inst -}}{{- $p := $s.V.parallelism -}}
{{- if eq $i.gpus 0 -}}0{{- else -}}
{{- $ppm := floor (addf (mulf $s.V.vllm.gpuMemoryUtilization 1000000.0) 0.5) | int64 -}}
{{- $usable := div (mul $i.gpuUsable $ppm) 1000000 -}}
{{- $items := include "kvgen.gpuNonKv" (list $s $C) | fromJson -}}
{{- $left := int64 0 -}}
{{- if $items -}}
{{- $left = $usable -}}
{{- range $k, $v := $items -}}{{- $left = sub $left (int64 $v) -}}{{- end -}}
{{- else -}}
{{- $weights := div $s.model.gpuWeights (mul (int64 $p.tensor) (int64 $p.pipeline)) -}}
{{- $overhead := mulf $C.gpu.baseOverheadGiB 1073741824.0 | int64 -}}
{{- $left = sub (sub (sub $usable $weights) $overhead) (div (mul $weights (int64 $C.gpu.overheadWeightPercent)) 100) -}}
{{- end -}}
{{- div (mul (max 0 $left) (int64 $C.gpu.kvBudgetPercent)) 100 -}}
{{- end -}}
{{- end -}}

{{/* kvgen.batchDefaults (list $s $C): [max_num_batched_tokens, max_num_seqs] vLLM 0.33 runs with: the values'
extraArgs, else the OpenAI server's defaults for the GPU, files/sizing.yaml context.batchedTokens (kvgen/plan/sizing.py
batch_defaults) */}}
{{- define "kvgen.batchDefaults" -}}
{{- $s := index . 0 -}}{{- $C := index . 1 -}}{{- $i := $s.inst -}}
{{- $band := dict -}}
{{- range $b := $C.context.batchedTokens -}}
{{- if and (not $band) (ge (int64 $i.gpuMemory) (mul (int64 $b.minGpuGiB) 1073741824)) (not (and $b.notGpuModel (contains (toString $b.notGpuModel) (lower $i.gpuModel)))) -}}{{- $band = $b -}}{{- end -}}
{{- end -}}
{{- $n := int64 $band.tokens -}}{{- $seqs := int64 $band.seqs -}}
{{- $t := include "kvgen.extraArg" (list $s.V (list "--max-num-batched-tokens")) -}}
{{- if regexMatch "^[0-9]+$" $t -}}{{- $n = int64 $t -}}{{- end -}}
{{- $q := include "kvgen.extraArg" (list $s.V (list "--max-num-seqs")) -}}
{{- if regexMatch "^[0-9]+$" $q -}}{{- $seqs = int64 $q -}}{{- end -}}
{{- list $n $seqs | toJson -}}
{{- end -}}

{{/*
kvgen.gpuNonKv: what vLLM 0.33's profiling charges outside the KV cache on its busiest GPU, item by item, as a
JSON object ({} without the model's hiddenSize, intermediateSize and vocabSize): kvgen/plan/sizing.py
gpu_non_kv, from files/sizing.yaml gpu.vllmProfile.
*/}}
{{- define "kvgen.gpuNonKv" -}}
{{- $s := index . 0 -}}{{- $C := index . 1 -}}
{{- $P := $C.gpu.vllmProfile -}}
{{- $m := $s.model -}}{{- $i := $s.inst -}}{{- $v := $s.V -}}
{{- if and (gt (int64 $m.hiddenSize) 0) (gt (int64 $m.vocabSize) 0) (gt (int64 $m.intermediateSize) 0) -}}
{{- $tp := int64 $v.parallelism.tensor -}}{{- $pp := int64 $v.parallelism.pipeline -}}
{{- $batch := include "kvgen.batchDefaults" (list $s $C) | fromJsonArray -}}
{{- $n := index $batch 0 | int64 -}}{{- $seqs := index $batch 1 | int64 -}}
{{- $h := int64 $m.hiddenSize -}}{{- $vocab := int64 $m.vocabSize -}}{{- $b := int64 $P.activationBytes -}}
{{- $embedding := mul $vocab $h 2 -}}
{{- $body := sub (int64 $m.gpuWeights) (mul (max 0 (int64 $m.embeddingParameters)) 2) -}}
{{- $weights := div (int64 $m.gpuWeights) $tp -}}
{{- if gt $pp 1 -}}{{- $weights = add (div (max 0 $body) (mul $pp $tp)) (div $embedding $tp) -}}{{- end -}}
{{- $width := mul (int64 $m.intermediateSize) (max 1 (int64 $m.expertsPerToken)) -}}
{{- $layer := mul $n $b (add (div (mul (int64 $P.mlpLive) $width) $tp) (mul (int64 $P.hiddenLive) $h)) -}}
{{- $sampler := add (mul (min $n $seqs) $vocab (int64 $P.samplerBytesPerLogit)) (mul $n $h $b) -}}
{{- $persistent := mul $seqs $vocab (int64 $P.penaltyBytesPerLogit) -}}
{{- if gt $pp 1 -}}{{- $persistent = add $persistent (mul 2 $n $h $b) -}}{{- end -}}
{{- $eager := false -}}
{{- range $a := default list $v.vllm.extraArgs -}}{{- if eq (first (splitList "=" (toString $a)) | replace "_" "-") "--enforce-eager" -}}{{- $eager = true -}}{{- end -}}{{- end -}}
{{- $graphs := int64 0 -}}
{{- if not $eager -}}{{- $graphs = add (mulf $P.cudaGraphBaseGiB 1073741824.0 | int64) (mul (mulf $P.cudaGraphPerLayerGiB 1073741824.0 | int64) (div (add (int64 $m.layers) (sub $pp 1)) $pp)) -}}{{- end -}}
{{- $items := dict "weights" $weights "activations" (max $layer $sampler) "persistent" $persistent "nonTorch" (mulf $P.nonTorchGiB 1073741824.0 | int64) "cudaGraphs" $graphs -}}
{{/* model.lora: preallocated with the weights, inside the profiled memory (kvgen.loraGpuBytes) */}}
{{- with include "kvgen.loraGpuBytes" (list $v $m $C) -}}{{- $_ := set $items "lora" (int64 .) -}}{{- end -}}
{{- $items | toJson -}}
{{- else -}}{}{{- end -}}
{{- end -}}

{{/*
kvgen.contextLength: the chart's counterpart of kvgen/plan/kvcache.py. What one sequence costs on one
GPU (full-attention layers keep every token, sliding ones at most window - 1 + the tokens in
flight, a hybrid model's fixed state), the longest length that fits the budget (a multiple of the
block size, at most the model's limit), and the --max-model-len to pass: the spec's
model.maxModelLen (which must fit), else the longest length when the model's own limit does not.
Sets $s.context (flag: 0 for none).
*/}}
{{- define "kvgen.contextLength" -}}
{{- $s := . -}}
{{- $C := $s.F.Get "files/sizing.yaml" | fromYaml -}}
{{- $X := $C.context -}}
{{- $m := $s.model -}}{{- $i := $s.inst -}}{{- $v := $s.V -}}
{{- $tp := int64 $v.parallelism.tensor -}}{{- $pp := int64 $v.parallelism.pipeline -}}
{{- $R := int64 $X.reserveTokens -}}{{- $bs := int64 $X.blockSize -}}
{{/* layers of each kind, padded to vLLM's KV-cache group size when both kinds exist, per pipeline stage */}}
{{- $full := sub $m.attentionLayers $m.slidingLayers -}}
{{- $sliding := $m.slidingLayers -}}
{{- if and (gt $full 0) (gt $sliding 0) -}}
{{- $group := min $full $sliding -}}
{{- if lt (mul 2 (max $full $sliding)) (mul 3 $group) -}}{{- $group = max $full $sliding -}}{{- end -}}
{{- $full = mul (div (add $full (sub $group 1)) $group) $group -}}
{{- $sliding = mul (div (add $sliding (sub $group 1)) $group) $group -}}
{{- end -}}
{{- $full = div (add $full (sub $pp 1)) $pp -}}
{{- $sliding = div (add $sliding (sub $pp 1)) $pp -}}
{{/* bytes per token per layer: K and V per KV head on this rank (MLA: one latent, on every rank), x the KV dtype's bytes */}}
{{- $kvBytes := int64 $m.kvBytes -}}
{{- $fullLayer := mul (int64 $m.fullHeadDim) $kvBytes -}}
{{- $slidingLayer := mul (int64 $m.headDim) $kvBytes -}}
{{- if not $m.mla -}}
{{- $fullLayer = mul 2 (max 1 (div $m.fullKvHeads $tp)) $m.fullHeadDim $kvBytes -}}
{{- $slidingLayer = mul 2 (max 1 (div $m.kvHeads $tp)) $m.headDim $kvBytes -}}
{{- end -}}
{{- $F := mul $full $fullLayer -}}
{{- $S := mul $sliding $slidingLayer -}}
{{/* vLLM's max_num_batched_tokens: --max-num-batched-tokens in extraArgs, else the default for this GPU */}}
{{- $batched := first (include "kvgen.batchDefaults" (list $s $C) | fromJsonArray) | int64 -}}
{{- $cap := int64 -1 -}}
{{- if gt $sliding 0 -}}{{- $cap = add (sub $m.slidingWindow 1) (mul (max 2 (add $pp 1)) $batched) -}}{{- end -}}
{{- $state := int64 0 -}}
{{- if $m.hybrid -}}{{- $state = mul (int64 $X.hybridStateGiB) 1073741824 -}}{{- end -}}
{{/* the budget of one GPU, or of vLLM's CPU backend */}}
{{- $budget := mul (int64 $C.vllm.cpuBackendKvSpaceGiB) 1073741824 -}}
{{- if gt $i.gpus 0 -}}{{- $budget = include "kvgen.gpuKvBudget" (list $s $C) | int64 -}}{{- end -}}
{{/* the longest length that fits */}}
{{- $unlimited := false -}}
{{- $longest := int64 0 -}}
{{- $left := sub $budget $state -}}
{{- $perToken := add $F $S -}}
{{- if eq $perToken 0 -}}{{- $unlimited = true -}}
{{- else -}}
{{- $longest = sub (include "kvgen.floorDiv" (list $left $perToken) | int64) $R -}}
{{- if and (gt $sliding 0) (gt $longest $cap) -}}
{{- if eq $F 0 -}}{{- $unlimited = true -}}
{{- else -}}{{- $longest = sub (include "kvgen.floorDiv" (list (sub $left (mul $S (add $cap $R))) $F) | int64) $R -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $fits := $m.maxModelLen -}}
{{- if not $unlimited -}}
{{- $fits = mul (div (max 0 $longest) $bs) $bs -}}
{{- if gt $m.maxModelLen 0 -}}{{- $fits = min $fits $m.maxModelLen -}}{{- end -}}
{{- end -}}
{{- $requested := int64 0 -}}
{{- if include "kvgen.isSet" (list $v.model "maxModelLen") -}}{{- $requested = int64 $v.model.maxModelLen -}}{{- end -}}
{{- $flag := $requested -}}
{{- $where := default "the instance" $i.type -}}
{{/* the words of kvgen's kvgen/plan/kvcache.py, problems and warnings alike */}}
{{- $what := printf "the GPU KV cache of %s" $where -}}
{{- $roomText := printf "%.2f GiB per GPU is there (after the weights)" (divf $budget 1073741824.0) -}}
{{- $more := "raise parallelism.tensor or vllm.gpuMemoryUtilization, or pick an instance with larger GPUs" -}}
{{- if eq $i.gpus 0 -}}
{{- $what = "the KV cache of vLLM's CPU backend" -}}
{{- $roomText = printf "VLLM_CPU_KVCACHE_SPACE gives %.2f GiB" (divf $budget 1073741824.0) -}}
{{- $more = "use a smaller model" -}}
{{- end -}}
{{- $known := or (not $unlimited) (gt $m.maxModelLen 0) -}}
{{- $warnings := list -}}
{{/* GPUs of unknown memory (kvgen.resolveInstance): vLLM finds the length; the spec's is passed as written */}}
{{- if and (gt $i.gpus 0) (eq $i.gpuMemory 0) -}}
{{- $fits = int64 0 -}}{{/* not known (kvgen/plan/kvcache.py context_length: None) */}}
{{- else if and $known (lt $fits $bs) -}}
{{- include "kvgen.problem" (list $s (ternary "model.maxModelLen" "parallelism.tensor" (gt $requested 0)) (printf "not even %d tokens of %s fit %s (%s); vLLM would refuse to start" $bs $m.id $what $roomText) $more) -}}
{{- else if gt $requested 0 -}}
{{- if and $known (gt $requested $fits) (not (and (gt $m.maxModelLen 0) (gt $requested $m.maxModelLen))) -}}
{{- include "kvgen.problem" (list $s "model.maxModelLen" (printf "%d tokens do not fit %s: one sequence of %s needs %.2f GiB and %s; vLLM would refuse to start" $requested $what $m.id (divf (include "kvgen.sequenceBytes" (list $F $S $cap $R $state $requested) | int64) 1073741824.0) $roomText) (printf "set model.maxModelLen to at most %d; or %s" $fits $more)) -}}
{{- end -}}
{{- else if eq $m.maxModelLen 0 -}}
{{- if and $known (gt $fits 0) -}}
{{- $warnings = append $warnings (printf "%s is not in the catalog: kvgen does not know its context length and cannot check that one sequence fits the KV cache (at most %d tokens would); set model.maxModelLen" $m.id $fits) -}}
{{- else -}}
{{- $warnings = append $warnings (printf "%s is not in the catalog: kvgen does not know its context length; set model.maxModelLen" $m.id) -}}
{{- end -}}
{{- else if lt $fits $m.maxModelLen -}}
{{- $flag = $fits -}}
{{- $warnings = append $warnings (printf "%s supports %d tokens, but one sequence of that needs %.2f GiB of %s and %s: kvgen passes --max-model-len=%d, the longest that fits (set model.maxModelLen to choose a length%s)" $m.id $m.maxModelLen (divf (include "kvgen.sequenceBytes" (list $F $S $cap $R $state $m.maxModelLen) | int64) 1073741824.0) $what $roomText $fits (ternary (printf "; for the full one, %s" $more) "" (gt $i.gpus 0))) -}}
{{- end -}}
{{- $_ := set $s "context" (dict "flag" $flag "fits" $fits "warnings" $warnings "perToken" (add $F $S)) -}}
{{- end -}}

{{/* kvgen.sequenceBytes: what one sequence of L tokens costs on one GPU (kvgen/plan/kvcache.py Cost.bytes_for):
full x (L + reserve) + sliding x (min(cap, L) + reserve) + state; cap -1: no sliding layers.
Usage: {{ include "kvgen.sequenceBytes" (list $F $S $cap $R $state $length) | int64 }} */}}
{{- define "kvgen.sequenceBytes" -}}
{{- $F := index . 0 -}}{{- $S := index . 1 -}}{{- $cap := index . 2 -}}{{- $R := index . 3 -}}{{- $state := index . 4 -}}{{- $L := int64 (index . 5) -}}
{{- $kept := $L -}}
{{- if ge (int64 $cap) 0 -}}{{- $kept = min $cap $L -}}{{- end -}}
{{- add (mul $F (add $L $R)) (mul $S (add $kept $R)) $state -}}
{{- end -}}

{{/* kvgen.floorDiv: a // b with Python's rounding toward minus infinity (b > 0). */}}
{{- define "kvgen.floorDiv" -}}
{{- $a := index . 0 -}}{{- $b := index . 1 -}}
{{- $q := div $a $b -}}
{{- if and (lt $a 0) (ne (mod $a $b) 0) -}}{{- $q = sub $q 1 -}}{{- end -}}
{{- $q -}}
{{- end -}}

{{/*
kvgen.startupThreshold: vLLM's startupProbe failureThreshold (kvgen/plan/sizing.py startup_failure_threshold):
probes.startup.failureThreshold when set, else the start-up budget over periodSeconds, rounded up. The
budget: the weights downloaded (none from a model.uri claim) and read at files/sizing.yaml startup's
rates, each in whole seconds rounded up, plus the engine's start, at least the floor.
*/}}
{{- define "kvgen.startupThreshold" -}}
{{- $s := . -}}
{{- $t := $s.V.probes.startup -}}
{{- if include "kvgen.isSet" (list $t "failureThreshold") -}}{{- int64 $t.failureThreshold -}}
{{- else -}}
{{- $X := ($s.F.Get "files/sizing.yaml" | fromYaml).startup -}}
{{- $weights := int64 $s.model.downloadWeights -}}
{{- $downloaded := ternary (int64 0) $weights (or (not (empty $s.V.model.uri)) (kindIs "map" $s.V.model.cache)) -}}
{{- $down := mul (int64 $X.downloadMiBPerSecond) 1048576 -}}
{{- $load := mul (int64 $X.loadMiBPerSecond) 1048576 -}}
{{- $seconds := add (div (add $downloaded (sub $down 1)) $down) (div (add $weights (sub $load 1)) $load) (int64 $X.engineSeconds) -}}
{{- $budget := max (int64 $X.floorSeconds) $seconds -}}
{{- $period := int64 $t.periodSeconds -}}
{{- div (add $budget (sub $period 1)) $period -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.weightsClaimSize: model.cache.claimTemplate's size in bytes (kvgen/plan/sizing.py
weights_claim_size): the values', else the checkpoint's download bytes with files/sizing.yaml
modelCache claimSlackPercent, plus headroomGiB, rounded up to whole GiB.
Usage: {{- $bytes := include "kvgen.weightsClaimSize" $s | int64 -}}
*/}}
{{- define "kvgen.weightsClaimSize" -}}
{{- $s := . -}}
{{- $t := $s.V.model.cache.claimTemplate -}}
{{- if include "kvgen.isSet" (list $t "size") -}}
{{- include "kvgen.bytes" $t.size -}}
{{- else -}}
{{- $mc := $s.C.modelCache -}}
{{- $bytes := add (int64 $s.model.downloadWeights) (include "kvgen.loraDownloadBytes" (list $s.V $s.model $s.C) | int64) -}}
{{- $slacked := div (add (mul $bytes (add 100 (int64 $mc.claimSlackPercent))) 99) 100 -}}
{{- include "kvgen.roundUpGiB" (add $slacked (mul (int64 $mc.headroomGiB) 1073741824)) -}}
{{- end -}}
{{- end -}}
