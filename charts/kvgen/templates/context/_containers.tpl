{{/* The layout (kvgen.layout, _context.tpl), its pieces: the containers: GPUs, disk tiers, the LMCache server, vLLM, the weights' download, the sidecar. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.gpus: the pod's GPUs: a device-plugin request, or (gpuAccess dra) one claim that
the LMCache sidecar lists too. Sets $s.gpus: resources (name: count), or claims and claimTemplate;
empty on a CPU node.
Usage: {{- include "kvgen.context.gpus" $s -}}
*/}}
{{- define "kvgen.context.gpus" -}}
{{- $s := . -}}
{{- $gpus := dict -}}
{{- if eq (toString $s.gpuAccess.mode) "dra" -}}
{{- $gpus = dict "claims" (list (dict "name" "gpus")) "claimTemplate" (dict "name" (printf "%s-gpus" $s.V.name) "request" "gpus" "deviceClassName" $s.gpuAccess.deviceClassName "count" (int64 $s.plan.gpusPerPod)) -}}
{{- else if gt (int64 $s.plan.instance.gpus) 0 -}}
{{- $mig := default "" $s.plan.instance.mig -}}
{{- $gpus = dict "resources" (dict (ternary (printf "nvidia.com/mig-%s" $mig) "nvidia.com/gpu" (ne $mig "")) (int64 $s.plan.gpusPerPod)) -}}
{{- end -}}
{{- $_ := set $s "gpus" $gpus -}}
{{- end -}}

{{/*
kvgen.context.tiers: the disk tiers, while offloading is on. Sets $s.tiers: a list of volume,
mount (at wiring.tierMountPrefix + index) and capacity (bytes; left out when unknown).
Usage: {{- include "kvgen.context.tiers" $s -}}
*/}}
{{- define "kvgen.context.tiers" -}}
{{- $s := . -}}
{{- $tiers := list -}}
{{- if $s.backend -}}
{{- range $n, $t := $s.V.kvCacheOffloading.secondary -}}
{{- $fs := $t.fileSystem -}}
{{- $known := index $s.plan.sizes.tiers $n -}}
{{- $name := printf "kv-cache-secondary-%d" $n -}}
{{- $tier := dict "volume" (dict "name" $name) "mount" (dict "name" $name "mountPath" (printf "%s%d" $s.W.tierMountPrefix $n)) -}}
{{- if include "kvgen.isSet" (list $fs "emptyDir") -}}
{{- $_ := set $tier.volume "emptyDir" (dict "sizeLimit" (include "kvgen.sizeText" $fs.emptyDir.size)) -}}
{{- else if include "kvgen.isSet" (list $fs.pvc "spec") -}}
{{- $_ := set $tier.volume "ephemeral" (dict "volumeClaimTemplate" (dict "spec" $fs.pvc.spec)) -}}
{{- else -}}
{{- $_ := set $tier.volume "persistentVolumeClaim" (dict "claimName" $fs.pvc.ref.name) -}}
{{- if include "kvgen.isSet" (list $fs.pvc.ref "path") -}}{{- $_ := set $tier.mount "subPath" $fs.pvc.ref.path -}}{{- end -}}
{{- end -}}
{{- if hasKey $known "capacity" -}}{{- $_ := set $tier "capacity" (int64 $known.capacity) -}}{{- end -}}
{{- $tiers = append $tiers $tier -}}
{{- end -}}
{{- end -}}
{{- $_ := set $s "tiers" $tiers -}}
{{- end -}}

{{/*
kvgen.context.lmcache: the LMCache server, when there is one: its launcher ConfigMap, and the
launcher's command line where the server runs (the launcher measures the node and adds
--l1-size-gb; with gpuAccess in-container it then runs `vllm serve`). Sets $s.lmcache: launcher,
command and args; leaves it out without a server.
Usage: {{- include "kvgen.context.lmcache" $s -}} (after kvgen.context.tiers)
*/}}
{{- define "kvgen.context.lmcache" -}}
{{- $s := . -}}
{{- if $s.gpuAccess -}}
{{- $z := $s.plan.sizes -}}
{{- $L := $s.W.launcher -}}
{{- $lm := $s.W.lmcache -}}
{{- $inContainer := eq $s.gpuAccess.mode "in-container" -}}
{{- $_ := set $s "lmcacheScraped" (and $s.V.metrics.podMonitor $s.V.metrics.lmcacheServer) -}}
{{- $script := $s.F.Get (printf "files/%s" $L.file) -}}
{{- $launcher := dict "name" (printf "%s-lmcache-launcher" $s.V.name) "file" $L.file "script" $script "sha256" (sha256sum $script) -}}
{{- $args := list -}}
{{/* with a utilization: what it is a share of, the pod's RAM for the whole tier or KAITO's per rank */}}
{{- if hasKey $z "utilization" -}}{{- $args = concat $args (list (printf "--utilization=%s" (include "kvgen.number" $z.utilization)) (printf "--utilization-scope=%s" $s.V.kvCacheOffloading.lmcache.utilizationScope)) -}}{{- end -}}
{{- $args = append $args (printf "--tensor-parallel-size=%d" (int64 $s.V.parallelism.tensor)) -}}
{{- if hasKey $z "l1Cap" -}}{{- $args = append $args (printf "--max-bytes=%d" (int64 $z.l1Cap)) -}}{{- end -}}
{{/* the memory the launcher leaves to others in its cgroup (the plan's sizes.launcherReserve) */}}
{{- $args = concat $args (list (printf "--reserve-bytes=%d" (int64 $z.launcherReserve)) (printf "--initial-gb=%d" (int64 $s.C.lmcache.l1InitGiB))) -}}
{{/* the LMCache versions the launcher accepts in the image: from serverUrlsSince on where lmcache.mp.server_urls is rendered (a server spanning several nodes) */}}
{{- $low := $s.rt.lmcache.supported.min -}}
{{- if gt (int64 $s.V.parallelism.nodes) 1 -}}{{- $low = $s.rt.lmcache.serverUrlsSince -}}{{- end -}}
{{- $args = concat $args (list (printf "--lmcache-min=%s" $low) (printf "--lmcache-below=%s" $s.rt.lmcache.supported.below)) -}}
{{/* LMCache's CUDA kernels load, or the launcher refuses to start (kvCacheOffloading.lmcache.allowTorchFallback) */}}
{{- $args = append $args (printf "--kernels=%s" (ternary "optional" "required" (eq true $s.V.kvCacheOffloading.lmcache.allowTorchFallback))) -}}
{{/* pod.terminationGracePeriodSeconds: the launcher stops what is left before the kubelet does */}}
{{- $podv := default dict $s.V.pod -}}
{{- if include "kvgen.isSet" (list $podv "terminationGracePeriodSeconds") -}}
{{- $args = append $args (printf "--grace-period=%d" (max (sub (int64 $podv.terminationGracePeriodSeconds) (int64 $L.graceMarginSeconds)) 1)) -}}
{{- end -}}
{{- if $inContainer -}}{{- $args = concat $args (include "kvgen.lmcacheHealthArgs" $s.W | fromJsonArray) -}}{{- end -}}
{{/* a server spanning several nodes: rank 0's scheduler reaches every node's server */}}
{{- $args = concat $args (list "--" $s.rt.lmcache.server "server" "--host" (ternary $lm.multiNodeHost $lm.host (gt (int64 $s.V.parallelism.nodes) 1)) "--port" (toString (int64 $lm.port))) -}}
{{- if $s.lmcacheScraped -}}{{- $args = concat $args (list "--http-host" $lm.metricsHost) -}}{{- end -}}
{{- $args = concat $args (list "--chunk-size" (toString (int64 $lm.chunkSize)) "--l1-use-lazy" "--l1-init-size-gb" (toString (int64 $s.C.lmcache.l1InitGiB)) "--eviction-policy" (upper $s.V.kvCacheOffloading.evictionPolicy)) -}}
{{- range $n, $t := $s.tiers -}}
{{- $path := printf "%s%d" $s.W.tierMountPrefix $n -}}
{{- $adapter := dict "type" "fs" "base_path" $path -}}
{{- if and (hasKey $t "capacity") (ge (int64 $t.capacity) 1073741824) -}}
{{- $e := $lm.l2Eviction -}}
{{- $adapter = dict "type" "fs_native" "base_path" $path "max_capacity_gb" (div (int64 $t.capacity) 1073741824) "eviction" (dict "eviction_policy" $e.policy "trigger_watermark" $e.triggerWatermark "eviction_ratio" $e.ratio) -}}
{{- end -}}
{{- $args = concat $args (list "--l2-adapter" (toJson $adapter)) -}}
{{- end -}}
{{- with $s.plan.remote -}}{{- $args = concat $args (list "--l2-adapter" (toJson .adapter)) -}}{{- end -}}
{{- if $inContainer -}}{{- $args = concat $args (list $L.then) $s.rt.vllm.entrypoint -}}{{- end -}}
{{- $_ := set $s "lmcache" (dict "launcher" $launcher "command" (list $s.rt.lmcache.python (printf "%s/%s" $L.dir $L.file)) "args" $args) -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.context.vllm: the vLLM container of rank 0 (or of a single-node server); with gpuAccess
in-container it runs the launcher, which starts the LMCache server, then `vllm serve`.
Sets $s.vllm (VllmContainer).
Usage: {{- include "kvgen.context.vllm" $s -}} (after vllmArgs, env, gpus, tiers, lmcache)
*/}}
{{- define "kvgen.context.vllm" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $mounts := list (dict "name" "dshm" "mountPath" "/dev/shm") (dict "name" "model-cache" "mountPath" $s.W.modelCacheMount) -}}
{{- with $s.plan.weights.mount -}}{{- $mounts = append $mounts (deepCopy .) -}}{{- end -}}
{{/* model.lora: the pvc:// adapters' claims, read-only */}}
{{- with $s.plan.lora -}}{{- range $m := .mounts -}}{{- $mounts = append $mounts (deepCopy $m) -}}{{- end -}}{{- end -}}
{{/* the spec's, after kvgen's own */}}
{{- $mounts = concat $mounts (default list $v.vllm.volumeMounts) -}}
{{/* the plan's size of this container (in-container: with the LMCache server's share) */}}
{{- $size := $s.plan.sizes.vllm -}}
{{- if eq $s.backend "native" -}}{{- range $t := $s.tiers -}}{{- $mounts = append $mounts $t.mount -}}{{- end -}}{{- end -}}
{{- $c := dict "name" "vllm" "image" $s.plan.images.vllm -}}
{{- with $s.plan.images.vllmPullPolicy -}}{{- $_ := set $c "imagePullPolicy" . -}}{{- end -}}
{{- $prefix := list -}}
{{- if and $s.lmcache (eq $s.gpuAccess.mode "in-container") -}}
{{- $mounts = append $mounts (dict "name" $s.W.launcher.volume "mountPath" $s.W.launcher.dir "readOnly" true) -}}
{{- range $t := $s.tiers -}}{{- $mounts = append $mounts $t.mount -}}{{- end -}}
{{- $_ := set $c "command" $s.lmcache.command -}}
{{- $prefix = $s.lmcache.args -}}
{{- end -}}
{{- $_ := set $c "args" (concat $prefix $s.vllmArgs.head $s.vllmArgs.tail) -}}
{{- $env := $s.env -}}
{{/* the LMCache server runs here: the remote tier's password */}}
{{- if and $s.lmcache (eq $s.gpuAccess.mode "in-container") -}}{{- $env = concat (default list $env) (default list (default dict $s.plan.remote).env) -}}{{- end -}}
{{- with $v.vllm.envFrom -}}{{- $_ := set $c "envFrom" . -}}{{- end -}}
{{- if $env -}}{{- $_ := set $c "env" $env -}}{{- end -}}
{{- $ports := list (dict "name" "http" "containerPort" (int64 $s.vllmPort) "protocol" "TCP") -}}
{{- if and $s.lmcache (eq $s.gpuAccess.mode "in-container") $s.lmcacheScraped -}}
{{- $ports = append $ports (dict "name" $s.W.lmcache.httpPortName "containerPort" (int64 $s.W.lmcache.httpPort) "protocol" "TCP") -}}
{{- end -}}
{{- $_ := set $c "ports" $ports -}}
{{/* RDMA devices beside the GPUs (resources.extra) */}}
{{- $extended := merge (deepCopy (default dict (default dict $v.resources).extra)) (default dict $s.gpus.resources) -}}
{{- $_ := set $c "resources" (include "kvgen.resources" (list $size $extended (default list $s.gpus.claims)) | fromJson) -}}
{{- $probes := dict -}}
{{- range $name := list "startup" "readiness" "liveness" -}}
{{- $t := index $s.V.probes $name -}}
{{- $threshold := int64 0 -}}
{{- if eq $name "startup" -}}{{- $threshold = int64 $s.plan.sizes.startupFailureThreshold -}}{{- else -}}{{- $threshold = int64 $t.failureThreshold -}}{{- end -}}
{{- $_ := set $probes $name (dict "periodSeconds" (int64 $t.periodSeconds) "timeoutSeconds" (int64 $t.timeoutSeconds) "failureThreshold" $threshold) -}}
{{- if include "kvgen.isSet" (list $t "initialDelaySeconds") -}}{{- $_ := set (index $probes $name) "initialDelaySeconds" (int64 $t.initialDelaySeconds) -}}{{- end -}}
{{- end -}}
{{- $_ := set $c "probes" $probes -}}
{{- $_ := set $c "volumeMounts" $mounts -}}
{{- $_ := set $c "securityContext" (deepCopy $s.plan.containerSecurityContext) -}}
{{- $_ := set $s "vllm" $c -}}
{{- end -}}

{{/*
kvgen.context.download: model.cache with download: the init container that fills the claim with
`hf download` (files already there are skipped): the vLLM image's huggingface_hub CLI, HF_TOKEN
from model.hfTokenSecret (never --token), HF_HOME on the model-cache emptyDir, then vllm.envFrom
and vllm.env. Sets $s.download, and $s.loraDownloads (model.lora's hf:// adapters, one each);
leaves them out otherwise.
Usage: {{- include "kvgen.context.download" $s -}}
*/}}
{{- define "kvgen.context.download" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- if $s.plan.weights.downloads -}}
{{- $d := $s.W.modelDownload -}}
{{- $c := dict "name" $d.container "image" $s.plan.images.vllm -}}
{{- with $s.plan.images.vllmPullPolicy -}}{{- $_ := set $c "imagePullPolicy" . -}}{{- end -}}
{{- $_ := set $c "command" $d.command -}}
{{- $_ := set $c "args" $s.plan.weights.downloadArgs -}}
{{- $env := list -}}
{{- with $v.model.hfTokenSecret -}}
{{- $ref := dict "name" .name "key" .key -}}
{{- if include "kvgen.isSet" (list . "optional") -}}{{- $_ := set $ref "optional" .optional -}}{{- end -}}
{{- $env = append $env (dict "name" "HF_TOKEN" "valueFrom" (dict "secretKeyRef" $ref)) -}}
{{- end -}}
{{- $env = append $env (dict "name" "HF_HOME" "value" $d.hfHome) -}}
{{- range $k := keys $d.env | sortAlpha -}}{{- $env = append $env (dict "name" $k "value" (index $d.env $k)) -}}{{- end -}}
{{- range $e := default list $v.vllm.env -}}{{- $env = append $env $e -}}{{- end -}}
{{- with $v.vllm.envFrom -}}{{- $_ := set $c "envFrom" . -}}{{- end -}}
{{- $_ := set $c "env" $env -}}
{{- $memory := include "kvgen.formatBytes" (mul (int64 $s.C.modelCache.downloadMemoryGiB) 1073741824) -}}
{{- $_ := set $c "resources" (dict "requests" (dict "cpu" (toString $s.C.modelCache.downloadCpu) "memory" $memory) "limits" (dict "memory" $memory)) -}}
{{/* the weights' mount, writable */}}
{{- $_ := set $c "volumeMounts" (list (dict "name" "model-cache" "mountPath" $s.W.modelCacheMount) (omit $s.plan.weights.mount "readOnly")) -}}
{{- $_ := set $c "securityContext" (deepCopy $s.plan.containerSecurityContext) -}}
{{- $_ := set $s "download" $c -}}
{{/* model.lora: an init container per hf:// adapter, the same one with its own name and `hf download` arguments */}}
{{- $lora := list -}}
{{- range $d := (default dict $s.plan.lora).downloads -}}
{{- $one := deepCopy $c -}}
{{- $_ := set $one "name" $d.name -}}
{{- $_ := set $one "args" $d.args -}}
{{- $lora = append $lora $one -}}
{{- end -}}
{{- if $lora -}}{{- $_ := set $s "loraDownloads" $lora -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.context.sidecar: the LMCache MP server as a native sidecar (gpuAccess visible-devices or
dra). Sets $s.sidecar (Sidecar); leaves it out otherwise.
Usage: {{- include "kvgen.context.sidecar" $s -}} (after gpus, tiers, lmcache)
*/}}
{{- define "kvgen.context.sidecar" -}}
{{- $s := . -}}
{{- if and $s.lmcache (ne $s.gpuAccess.mode "in-container") -}}
{{- $c := dict "name" "lmcache-mp-server" "image" $s.plan.images.lmcache "command" $s.lmcache.command "args" $s.lmcache.args -}}
{{- with $s.plan.images.lmcachePullPolicy -}}{{- $_ := set $c "imagePullPolicy" . -}}{{- end -}}
{{/* without a DRA claim it sees the GPUs it reads over CUDA IPC without taking GPUs of its own */}}
{{- $env := list -}}
{{- if not $s.gpus.claims -}}
{{- $env = list (dict "name" "NVIDIA_VISIBLE_DEVICES" "value" "all") (dict "name" "NVIDIA_DRIVER_CAPABILITIES" "value" "compute,utility") -}}
{{- else -}}
{{/* dra: only the claimed GPUs (files/gpu-access.yaml) */}}
{{- $env = default list $s.gpuAccess.env -}}
{{- end -}}
{{/* the remote tier's password, from its Secret */}}
{{- $env = concat $env (default list (default dict $s.plan.remote).env) -}}
{{- if $env -}}{{- $_ := set $c "env" $env -}}{{- end -}}
{{- if $s.lmcacheScraped -}}
{{- $_ := set $c "ports" (list (dict "name" $s.W.lmcache.httpPortName "containerPort" (int64 $s.W.lmcache.httpPort) "protocol" "TCP")) -}}
{{- end -}}
{{- $_ := set $c "resources" (include "kvgen.resources" (list $s.plan.sizes.lmcacheServer dict (default list $s.gpus.claims)) | fromJson) -}}
{{/* the startup and liveness probes: the launcher in probe mode, which picks the installed LMCache's health path */}}
{{- $_ := set $c "probeCommand" (concat (list $s.rt.lmcache.python (printf "%s/%s" $s.W.launcher.dir $s.W.launcher.file) "--probe") (include "kvgen.lmcacheHealthArgs" $s.W | fromJsonArray)) -}}
{{- $mounts := list (dict "name" "dshm" "mountPath" "/dev/shm") (dict "name" $s.W.launcher.volume "mountPath" $s.W.launcher.dir "readOnly" true) -}}
{{- range $t := $s.tiers -}}{{- $mounts = append $mounts $t.mount -}}{{- end -}}
{{- $_ := set $c "volumeMounts" $mounts -}}
{{- $_ := set $c "securityContext" (deepCopy $s.plan.containerSecurityContext) -}}
{{- $_ := set $s "sidecar" $c -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.context.routingSidecar: a decode server in routing.mode gateway: llm-d's routing sidecar (pd-sidecar,
files/runtime.yaml picker.sidecar) as a native sidecar in front of vLLM, as KServe's decode template has it
(kserve aaac4e29 config/llmisvcconfig/config-llm-decode-template.yaml:240-300): on service.port it sends each
request carrying the picker's prefill header to that prefill server first, then to vLLM on picker.sidecar.vllmPort.
Its SSRF protection reads the pool and its pods: a ServiceAccount token in this container only. Sets
$s.routingSidecar (RoutingSidecar) and $s.routingAccess (its ServiceAccount, Role and RoleBinding); leaves them out
otherwise.
Usage: {{- include "kvgen.context.routingSidecar" $s -}} (after vllmArgs, meta)
*/}}
{{- define "kvgen.context.routingSidecar" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- if and (eq (toString $v.disaggregation.role) "decode") (eq (default "none" (default dict $v.routing).mode) "gateway") -}}
{{- $rt := $s.rt.picker.sidecar -}}
{{- $kserve := eq (default "kvgen" $v.routing.naming) "kserve" -}}
{{- $pool := ternary (printf "%s-inference-pool" $v.name) (printf "%s-pool" $v.name) $kserve -}}
{{- $port := int64 $v.service.port -}}
{{- $args := list (printf "--port=%d" $port) (printf "--vllm-port=%d" (int64 $rt.vllmPort)) (printf "--kv-connector=%s" $rt.kvConnector) "--enable-ssrf-protection=true" (printf "--pool-group=%s" $rt.poolGroup) (printf "--inference-pool=$(POD_NAMESPACE)/%s" $pool) "--secure-proxy=false" -}}
{{- $probe := dict "path" $rt.healthPath "port" "routing" -}}
{{- $c := dict "name" "llm-d-routing-sidecar" "image" $s.plan.images.routingSidecar "command" $rt.command "args" $args -}}
{{- $_ := set $c "env" (list (dict "name" "POD_NAMESPACE" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.namespace")))) -}}
{{- $_ := set $c "ports" (list (dict "name" "routing" "containerPort" $port "protocol" "TCP")) -}}
{{- $_ := set $c "probePath" $rt.healthPath -}}
{{- $_ := set $c "liveness" (deepCopy $rt.liveness) -}}
{{- $_ := set $c "readiness" (deepCopy $rt.readiness) -}}
{{- $_ := set $c "resources" (deepCopy $rt.resources) -}}
{{- $_ := set $c "securityContext" (deepCopy $s.plan.containerSecurityContext) -}}
{{- $_ := set $c "volumeMounts" (list (dict "name" "routing-sidecar-token" "mountPath" "/var/run/secrets/kubernetes.io/serviceaccount" "readOnly" true)) -}}
{{- $_ := set $s "routingSidecar" $c -}}
{{/* its ServiceAccount: the pods' own (pod.serviceAccount), else one rendered for it; KServe's names with routing.naming kserve (workload_single_node.go:430,471,486) */}}
{{- $base := ternary (printf "%s-kserve" $v.name) (printf "%s-routing-sidecar" $v.name) $kserve -}}
{{- $access := dict "serviceAccount" (default $base $s.plan.serviceAccountName) "createServiceAccount" (not $s.plan.serviceAccountName) "role" (ternary (printf "%s-role" $base) $base $kserve) "roleBinding" (ternary (printf "%s-rb" $base) $base $kserve) -}}
{{- $_ := set $s "routingAccess" $access -}}
{{- end -}}
{{- end -}}
