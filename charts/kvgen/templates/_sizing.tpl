{{/*
kvgen.size: the chart's counterpart of kvgen/sizing.py. Every constant comes from
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

{{/* kvgen.container: computed sizes with the explicit spec values applied (kvgen's _apply_overrides). */}}
{{- define "kvgen.container" -}}
{{- $computed := index . 0 -}}
{{- $explicit := index . 1 -}}
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

{{- $share := 1.0 -}}
{{- if gt $i.gpus 0 -}}{{- $share = divf $gpus $i.gpus -}}{{- end -}}
{{- $nodeAlloc := include "kvgen.allocatable" (list $i.memory $C) | int64 -}}
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
{{- $cpuTier = divf (mulf $podAlloc $utilization) $tp | int64 -}}
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
{{- $shm = include "kvgen.roundUpGiB" $shm | int64 -}}
{{- if include "kvgen.isSet" (list $res "shm") -}}{{- $shm = include "kvgen.bytes" $res.shm | int64 -}}{{- end -}}

{{/* model cache: every node downloads the whole checkpoint */}}
{{- $modelCache := include "kvgen.roundUpGiB" (add $m.weights (mul (int64 $C.modelCache.headroomGiB) $GiB)) | int64 -}}
{{- if include "kvgen.isSet" (list $res "modelCache") -}}{{- $modelCache = include "kvgen.bytes" $res.modelCache | int64 -}}{{- end -}}

{{/* the vLLM container */}}
{{- $vllmMem := 0.0 -}}
{{- if gt $i.gpus 0 -}}
{{- $vllmMem = addf (add (mul (int64 $C.vllm.podOverheadGiB) $GiB) (mul (mul (int64 $C.vllm.perGpuOverheadGiB) $GiB) $gpus)) (mulf $weightsPerNode $C.vllm.modelLoadingFactor) -}}
{{- else -}}
{{- $vllmMem = add (add (mul (int64 $C.vllm.podOverheadGiB) $GiB) $m.weights) (mul (int64 $C.vllm.cpuBackendKvSpaceGiB) $GiB) | float64 -}}
{{- end -}}
{{- $vllmMem = addf $vllmMem $shmBase -}}
{{- if eq $backend "native" -}}{{- $vllmMem = addf $vllmMem (mulf $cpuTier $factor) -}}{{- end -}}
{{- $vllmMem = include "kvgen.roundUpGiB" $vllmMem | int64 -}}
{{- $cpuReq := add (int64 $C.vllm.cpuBase) (mul (int64 $C.vllm.cpuPerGpu) $gpus) -}}
{{- if gt $i.cpu 0 -}}
{{- $cpuReq = min $cpuReq (max 1 (mulf (mulf $i.cpu $share) $C.vllm.cpuRequestCeiling | int64)) -}}
{{- end -}}
{{- $vllmEph := $modelCache -}}
{{- if eq $backend "native" -}}{{- $vllmEph = add $vllmEph $tiersEph -}}{{- end -}}
{{- $vllm := include "kvgen.container" (list (dict "cpu" (toString $cpuReq) "memory" $vllmMem "ephemeral" $vllmEph) $res.vllm) | fromJson -}}

{{/* the LMCache sidecar */}}
{{- $lmcache := dict -}}
{{- if eq $backend "lmcache" -}}
{{- $lmMem := include "kvgen.roundUpGiB" (add $cpuTier (mul (int64 $C.lmcache.serverOverheadGiB) $GiB)) | int64 -}}
{{- $lmcache = include "kvgen.container" (list (dict "cpu" (toString $C.lmcache.serverCpu) "memory" $lmMem "ephemeral" $tiersEph) $res.lmcacheServer) | fromJson -}}
{{- end -}}

{{/* does it fit the node? */}}
{{- $where := default "the instance" $i.type -}}
{{- $podMem := int64 $vllm.memory -}}
{{- if $lmcache -}}{{- $podMem = add $podMem (int64 $lmcache.memory) -}}{{- end -}}
{{- if gt $podMem $podAlloc -}}
{{- $path := "instance.type" -}}
{{- $hint := "pick an instance with more RAM, or lower resources.*.memory" -}}
{{- if and $backend (gt $cpuTier 0) -}}
{{- $path = "kvCacheOffloading.cpu" -}}
{{- $hint = "lower kvCacheOffloading.cpu, or pick an instance with more RAM" -}}
{{- if and (eq $backend "lmcache") (not (kindIs "string" $utilization)) (not $hasCpu) -}}
{{- $path = "kvCacheOffloading.cpuMemoryUtilization" -}}
{{- $hint = "lower kvCacheOffloading.cpuMemoryUtilization, or pick an instance with more RAM" -}}
{{- end -}}
{{- end -}}
{{- include "kvgen.problem" (list $s $path (printf "the pod needs %.1f GiB of memory but %s leaves %.1f GiB to it" (divf $podMem 1073741824.0) $where (divf $podAlloc 1073741824.0)) $hint) -}}
{{- end -}}
{{- $podEph := int64 $vllm.ephemeral -}}
{{- if $lmcache -}}{{- $podEph = add $podEph (int64 $lmcache.ephemeral) -}}{{- end -}}
{{- if and (gt $i.localDisk 0) (gt (float64 $podEph) (mulf $i.localDisk $share)) -}}
{{- include "kvgen.problem" (list $s (ternary "kvCacheOffloading.secondary" "instance.type" (gt $tiersEph 0)) (printf "the pod needs %.1f GiB of ephemeral storage but %s has %.1f GiB of local disk for it" (divf $podEph 1073741824.0) $where (divf (mulf $i.localDisk $share) 1073741824.0)) "make the emptyDir tiers smaller, move them to a pvc tier, or pick an instance with more local disk") -}}
{{- end -}}
{{- if gt $i.gpus 0 -}}
{{- $perGpuWeights := divf $m.weights (mul $tp (int64 $p.pipeline)) -}}
{{- $usable := mulf $i.gpuMemory $v.vllm.gpuMemoryUtilization -}}
{{- $gpuOverhead := mulf $C.gpu.baseOverheadGiB $GiB | int64 -}}
{{- if gt (addf $perGpuWeights $gpuOverhead) $usable -}}
{{- include "kvgen.problem" (list $s "parallelism.tensor" (printf "%s does not fit: its weights per GPU exceed what a GPU of %s offers at gpuMemoryUtilization %s" $m.id $where (include "kvgen.number" $v.vllm.gpuMemoryUtilization)) "raise parallelism.tensor or parallelism.pipeline, or pick an instance with larger GPUs") -}}
{{- end -}}
{{- end -}}

{{- $_ := set $s "size" (dict "cpuTier" $cpuTier "l1Cap" $l1Cap "utilization" $utilization "shm" $shm "modelCache" $modelCache "vllm" $vllm "lmcache" $lmcache) -}}
{{- end -}}
