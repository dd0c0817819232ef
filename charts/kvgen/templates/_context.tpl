{{/*
kvgen.context: every value the object templates lay out, as JSON: the chart's counterpart of
kvgen.plan.context. It resolves the model and node, checks the values, applies the rules and
sizes the pod; when the values cannot be served it fails once, listing every problem.
Usage: {{- $c := include "kvgen.context" . | fromJson }}
*/}}
{{- define "kvgen.context" -}}
{{- $v := .Values -}}
{{- $s := dict "V" $v "F" .Files "errs" list "kube" .Capabilities.KubeVersion.Version -}}
{{- include "kvgen.resolveModel" $s -}}
{{- include "kvgen.resolveInstance" $s -}}
{{- include "kvgen.checkApiserver" $s -}}
{{- if and (hasKey $s "model") (hasKey $s "inst") -}}{{- include "kvgen.checkStructure" $s -}}{{- end -}}
{{- if not $s.errs -}}
{{- include "kvgen.decide" $s -}}
{{- include "kvgen.gpuAccess" $s -}}
{{- include "kvgen.checkPorts" $s -}}
{{/* the native sidecar (gpuAccess visible-devices; dra has its own 1.34 floor) needs Kubernetes 1.29 */}}
{{- if and (eq $s.backend "lmcache") (eq (toString $s.gpuAccess.mode) "visible-devices") (not (semverCompare ">=1.29.0-0" $s.kube)) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.backend" (printf "the lmcache backend runs the LMCache server as a native sidecar, which needs Kubernetes 1.29 or later (SidecarContainers is off by default in 1.28); the target is %s" (regexFind "[0-9]+\\.[0-9]+" $s.kube)) "target Kubernetes 1.29 or later (--kube-version), use kvCacheOffloading.lmcache.gpuAccess in-container (no sidecar), or the native backend") -}}
{{- end -}}
{{- include "kvgen.contextLength" $s -}}
{{- include "kvgen.size" $s -}}
{{- include "kvgen.warnings" $s -}}
{{- end -}}
{{- if $s.errs -}}
{{- $lines := list (printf "kvgen: %d problem(s) in the values; nothing was rendered:" (len $s.errs)) -}}
{{- range $e := $s.errs -}}
{{- $line := printf "  %s: %s" $e.path $e.message -}}
{{- if $e.hint -}}{{- $line = printf "%s (hint: %s)" $line $e.hint -}}{{- end -}}
{{- $lines = append $lines $line -}}
{{- end -}}
{{- fail (join "\n" $lines) -}}
{{- end -}}

{{- $rt := .Files.Get "files/runtime.yaml" | fromYaml -}}
{{- $C := .Files.Get "files/sizing.yaml" | fromYaml -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $p := $v.parallelism -}}
{{- $i := $s.inst -}}
{{- $d := $s.decision -}}
{{- $z := $s.size -}}
{{- $backend := $s.backend -}}
{{- $access := $s.gpuAccess -}}
{{- $dra := eq (toString $access.mode) "dra" -}}
{{- $inContainer := eq (toString $access.mode) "in-container" -}}
{{- $name := $v.name -}}
{{- $namespace := default .Release.Namespace $v.namespace -}}
{{- $nodes := int64 $p.nodes -}}
{{- $multiNode := gt $nodes 1 -}}
{{- $role := $v.disaggregation.role -}}
{{- $tierCount := 0 -}}
{{- if $backend -}}{{- $tierCount = len $o.secondary -}}{{- end -}}

{{/* images and labels */}}
{{- $pin := $rt.vllm.image -}}
{{- $image := default dict $v.images.vllm -}}
{{- if eq $i.gpus 0 -}}
{{- $pin = index $rt.vllm.cpuImage $i.arch -}}
{{- $image = default dict $v.images.vllmCpu -}}
{{- end -}}
{{- $selector := dict "app.kubernetes.io/name" "vllm" "app.kubernetes.io/instance" $name -}}
{{- $labels := merge (dict "app.kubernetes.io/component" (ternary "inference" $role (eq $role "none")) "app.kubernetes.io/version" (default $pin.tag $image.tag) "app.kubernetes.io/managed-by" "kvgen") $selector -}}
{{- $annotations := dict "kvgen.dev/kv-cache-offloading" (ternary "enabled" "disabled" $d.enabled) -}}
{{- if $d.enabled -}}
{{- $_ := set $annotations "kvgen.dev/kv-cache-backend" $backend -}}
{{- else -}}
{{- $_ := set $annotations "kvgen.dev/kv-cache-offloading-reason" $d.code -}}
{{- end -}}
{{- if $access -}}{{- $_ := set $annotations "kvgen.dev/lmcache-gpu-access" $access.mode -}}{{- end -}}

{{/* vLLM arguments: `vllm serve` is the image's entrypoint; the model is its positional argument */}}
{{- $headless := printf "%s-headless" $name -}}
{{- $masterPort := 29500 -}}
{{- $args := list $v.model.id (printf "--port=%d" (int64 $v.service.port)) (printf "--tensor-parallel-size=%d" (int64 $p.tensor)) -}}
{{- if gt (int64 $p.pipeline) 1 -}}{{- $args = append $args (printf "--pipeline-parallel-size=%d" (int64 $p.pipeline)) -}}{{- end -}}
{{- if gt (int64 $p.data) 1 -}}{{- $args = append $args (printf "--data-parallel-size=%d" (int64 $p.data)) -}}{{- end -}}
{{- if $multiNode -}}
{{- $args = concat $args (list (printf "--nnodes=%d" $nodes) "--node-rank=$(NODE_RANK)" (printf "--master-addr=%s-0.%s.%s.svc.cluster.local" $name $headless $namespace) (printf "--master-port=%d" $masterPort)) -}}
{{- end -}}
{{- $rankArgs := $args -}}
{{- $tail := list -}}
{{/* the spec's model.maxModelLen, or the longest length that fits (kvgen.contextLength) */}}
{{- if gt (int64 $s.context.flag) 0 -}}{{- $tail = append $tail (printf "--max-model-len=%d" (int64 $s.context.flag)) -}}{{- end -}}
{{- if gt $i.gpus 0 -}}{{- $tail = append $tail (printf "--gpu-memory-utilization=%s" (include "kvgen.number" $v.vllm.gpuMemoryUtilization)) -}}{{- end -}}
{{- $kv := dict -}}
{{- if eq $backend "lmcache" -}}
{{- $kv = dict "kv_connector" $rt.connectors.lmcache "kv_role" "kv_both" "kv_connector_extra_config" (dict "lmcache.mp.host" "tcp://127.0.0.1" "lmcache.mp.port" 5555) -}}
{{- else if eq $backend "native" -}}
{{- $extra := dict "cpu_bytes_to_use" (int64 $z.cpuTier) "eviction_policy" $o.evictionPolicy "spec_name" (ternary "TieringOffloadingSpec" "CPUOffloadingSpec" (gt $tierCount 0)) -}}
{{- if gt $tierCount 0 -}}
{{- $tiers := list -}}
{{- range $n := until $tierCount -}}{{- $tiers = append $tiers (dict "type" "fs" "root_dir" (printf "/mnt/kv-cache-%d" $n)) -}}{{- end -}}
{{- $_ := set $extra "secondary_tiers" $tiers -}}
{{- end -}}
{{- $kv = dict "kv_connector" $rt.connectors.native "kv_role" "kv_both" "kv_connector_extra_config" $extra -}}
{{- else if ne $role "none" -}}
{{- $kv = dict "kv_connector" $rt.connectors.disaggregation "kv_role" "kv_both" -}}
{{- end -}}
{{- if $kv -}}{{- $tail = append $tail (printf "--kv-transfer-config=%s" (toJson $kv)) -}}{{- end -}}
{{- if and (eq $backend "native") $s.model.hybrid -}}{{- $tail = append $tail "--enable-prefix-caching" -}}{{- end -}}
{{- $tail = concat $tail (default list $v.vllm.extraArgs) -}}
{{- $args = concat $rankArgs $tail -}}

{{- $env := list -}}
{{- if $multiNode -}}{{- $env = append $env (dict "name" "NODE_RANK" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.labels['apps.kubernetes.io/pod-index']"))) -}}{{- end -}}
{{- with $v.model.hfTokenSecret -}}{{- $env = append $env (dict "name" "HF_TOKEN" "valueFrom" (dict "secretKeyRef" (dict "name" .name "key" .key))) -}}{{- end -}}
{{- if ne $role "none" -}}{{- $env = append $env (dict "name" "VLLM_NIXL_SIDE_CHANNEL_HOST" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.podIP"))) -}}{{- end -}}
{{- if eq $i.gpus 0 -}}{{- $env = append $env (dict "name" "VLLM_CPU_KVCACHE_SPACE" "value" (toString (int64 $C.vllm.cpuBackendKvSpaceGiB))) -}}{{- end -}}
{{- range $e := default list $v.vllm.env -}}{{- $env = append $env $e -}}{{- end -}}

{{/* GPUs: a device-plugin request, or (gpuAccess dra) one claim the sidecar lists too */}}
{{- $gpu := dict -}}
{{- $claims := list -}}
{{- $claimTemplate := dict -}}
{{- if $dra -}}
{{- $claimTemplate = dict "name" (printf "%s-gpus" $name) "request" "gpus" "deviceClassName" $access.deviceClassName "count" (int64 $s.gpusPerPod) -}}
{{- $claims = list (dict "name" "gpus") -}}
{{- else if gt $i.gpus 0 -}}
{{- $_ := set $gpu (ternary (printf "nvidia.com/mig-%s" $i.mig) "nvidia.com/gpu" (ne $i.mig "")) (int64 $s.gpusPerPod) -}}
{{- end -}}

{{/* volumes */}}
{{- $tierVolumes := list -}}
{{- $tierMounts := list -}}
{{- $capacities := list -}}
{{- if $backend -}}
{{- range $n, $t := $o.secondary -}}
{{- $fs := $t.fileSystem -}}
{{- $vol := printf "kv-cache-secondary-%d" $n -}}
{{- $mount := dict "name" $vol "mountPath" (printf "/mnt/kv-cache-%d" $n) -}}
{{- if include "kvgen.isSet" (list $fs "emptyDir") -}}
{{- $tierVolumes = append $tierVolumes (dict "name" $vol "emptyDir" (dict "sizeLimit" $fs.emptyDir.size)) -}}
{{- $capacities = append $capacities (include "kvgen.bytes" $fs.emptyDir.size | int64) -}}
{{- else if include "kvgen.isSet" (list $fs.pvc "spec") -}}
{{- $tierVolumes = append $tierVolumes (dict "name" $vol "ephemeral" (dict "volumeClaimTemplate" (dict "spec" $fs.pvc.spec))) -}}
{{- $storage := "" -}}
{{- if and (kindIs "map" $fs.pvc.spec.resources) (kindIs "map" $fs.pvc.spec.resources.requests) (include "kvgen.isSet" (list $fs.pvc.spec.resources.requests "storage")) -}}{{- $storage = include "kvgen.bytes" $fs.pvc.spec.resources.requests.storage -}}{{- end -}}
{{- $capacities = append $capacities $storage -}}
{{- else -}}
{{- $tierVolumes = append $tierVolumes (dict "name" $vol "persistentVolumeClaim" (dict "claimName" $fs.pvc.ref.name)) -}}
{{- if include "kvgen.isSet" (list $fs.pvc.ref "path") -}}{{- $_ := set $mount "subPath" $fs.pvc.ref.path -}}{{- end -}}
{{- $capacities = append $capacities "" -}}
{{- end -}}
{{- $tierMounts = append $tierMounts $mount -}}
{{- end -}}
{{- end -}}

{{/* the LMCache launcher, and the `lmcache server` command it starts (kvgen's _lmcache_command) */}}
{{- $launcher := dict -}}
{{- $lmOptions := list -}}
{{- $lmServer := list -}}
{{- $launcherMount := dict "name" "lmcache-launcher" "mountPath" "/opt/kvgen" "readOnly" true -}}
{{- if $access -}}
{{- $script := .Files.Get "files/lmcache_launcher.py" -}}
{{- $launcher = dict "name" (printf "%s-lmcache-launcher" $name) "file" "lmcache_launcher.py" "script" $script "sha256" (sha256sum $script) -}}
{{- if not (kindIs "string" $z.utilization) -}}{{- $lmOptions = append $lmOptions (printf "--utilization=%s" (include "kvgen.number" $z.utilization)) -}}{{- end -}}
{{- $lmOptions = append $lmOptions (printf "--tensor-parallel-size=%d" (int64 $p.tensor)) -}}
{{- if not (kindIs "string" $z.l1Cap) -}}{{- $lmOptions = append $lmOptions (printf "--max-bytes=%d" (int64 $z.l1Cap)) -}}{{- end -}}
{{- $lmServer = list $rt.lmcache.server "server" "--host" "127.0.0.1" "--port" "5555" "--chunk-size" "256" "--l1-use-lazy" "--l1-init-size-gb" (toString (int64 $C.lmcache.l1InitGiB)) "--eviction-policy" (upper $o.evictionPolicy) -}}
{{- range $n, $cap := $capacities -}}
{{- $adapter := dict "type" "fs" "base_path" (printf "/mnt/kv-cache-%d" $n) -}}
{{- if and (ne (toString $cap) "") (ge (int64 $cap) 1073741824) -}}
{{- $adapter = dict "type" "fs_native" "base_path" (printf "/mnt/kv-cache-%d" $n) "max_capacity_gb" (div (int64 $cap) 1073741824) "eviction" (dict "eviction_policy" "LRU" "trigger_watermark" 0.8 "eviction_ratio" 0.2) -}}
{{- end -}}
{{- $lmServer = concat $lmServer (list "--l2-adapter" (toJson $adapter)) -}}
{{- end -}}
{{- end -}}
{{- $serverOverhead := mul (int64 $C.lmcache.serverOverheadGiB) 1073741824 -}}
{{- $initGb := printf "--initial-gb=%d" (int64 $C.lmcache.l1InitGiB) -}}

{{/* the vLLM container; with gpuAccess in-container it runs the launcher, which runs `vllm serve` */}}
{{- $vllmMounts := list (dict "name" "dshm" "mountPath" "/dev/shm") (dict "name" "model-cache" "mountPath" "/root/.cache") -}}
{{- $vllmSize := $z.vllm -}}
{{- $command := list -}}
{{- $prefix := list -}}
{{- if eq $backend "native" -}}
{{- $vllmMounts = concat $vllmMounts $tierMounts -}}
{{- else if $inContainer -}}
{{- $vllmMounts = concat $vllmMounts (list $launcherMount) $tierMounts -}}
{{- $vllmSize = include "kvgen.withServer" (list $z.vllm $z.lmcache) | fromJson -}}
{{- $command = list $rt.lmcache.python "/opt/kvgen/lmcache_launcher.py" -}}
{{- $prefix = concat $lmOptions (list (printf "--reserve-bytes=%d" (add (int64 $z.vllm.limit) $serverOverhead)) $initGb (printf "--health-url=%s" $rt.lmcache.healthUrl) "--") $lmServer (list "--then") $rt.vllm.entrypoint -}}
{{- end -}}
{{- $vllm := dict "name" "vllm" "image" (include "kvgen.image" (list $image $pin)) "command" $command "args" (concat $prefix $args) "env" $env "ports" (list (dict "name" "http" "containerPort" (int64 $v.service.port) "protocol" "TCP")) "resources" (include "kvgen.resources" (list $vllmSize $gpu $claims) | fromJson) "volumeMounts" $vllmMounts "probes" true -}}

{{/* the LMCache MP server as a native sidecar (gpuAccess visible-devices or dra) */}}
{{- $sidecar := dict -}}
{{- if and $access (not $inContainer) -}}
{{- $sidecarEnv := list -}}
{{- if not $dra -}}{{- $sidecarEnv = list (dict "name" "NVIDIA_VISIBLE_DEVICES" "value" "all") (dict "name" "NVIDIA_DRIVER_CAPABILITIES" "value" "compute,utility") -}}{{- end -}}
{{- $largs := concat $lmOptions (list (printf "--reserve-bytes=%d" $serverOverhead) $initGb "--") $lmServer -}}
{{- $sidecar = dict "name" "lmcache-mp-server" "image" (include "kvgen.lmcacheImage" (list (default dict $v.images.lmcache) (default dict $v.images.vllm) $rt.vllm.image)) "command" (list $rt.lmcache.python "/opt/kvgen/lmcache_launcher.py") "args" $largs "env" $sidecarEnv "resources" (include "kvgen.resources" (list $z.lmcache dict $claims) | fromJson) "probeCommand" (list $rt.lmcache.python "-c" (printf "import urllib.request; urllib.request.urlopen('%s', timeout=2)" $rt.lmcache.healthUrl)) "volumeMounts" (concat (list (dict "name" "dshm" "mountPath" "/dev/shm") $launcherMount) $tierMounts) -}}
{{- end -}}

{{- $volumes := list (dict "name" "dshm" "emptyDir" (dict "medium" "Memory" "sizeLimit" (include "kvgen.formatBytes" $z.shm))) (dict "name" "model-cache" "emptyDir" (dict "sizeLimit" (include "kvgen.formatBytes" $z.modelCache))) -}}
{{- if $launcher -}}{{- $volumes = append $volumes (dict "name" "lmcache-launcher" "configMap" (dict "name" $launcher.name "defaultMode" 365)) -}}{{- end -}}
{{- $volumes = concat $volumes $tierVolumes -}}

{{- $nodeSelector := dict -}}
{{- if $i.type -}}{{- $_ := set $nodeSelector "node.kubernetes.io/instance-type" $i.type -}}{{- end -}}
{{- $nodeSelector = merge (deepCopy (default dict $v.scheduling.nodeSelector)) $nodeSelector -}}
{{- $podAnnotations := deepCopy $annotations -}}
{{- if $launcher -}}{{- $_ := set $podAnnotations "kvgen.dev/lmcache-launcher-sha256" $launcher.sha256 -}}{{- end -}}
{{- $resourceClaims := list -}}
{{- if $dra -}}{{- $resourceClaims = list (dict "name" "gpus" "resourceClaimTemplateName" $claimTemplate.name) -}}{{- end -}}

{{/* workloads: a Deployment, or rank 0 and ranks 1.. of a multi-node server */}}
{{- $workloads := list -}}
{{- if $multiNode -}}
{{- range $r := list "leader" "worker" -}}
{{- $c := deepCopy $vllm -}}
{{- if eq $r "worker" -}}
{{- $_ := set $c "args" (concat $prefix $rankArgs (list "--headless") $tail) -}}
{{- $_ := set $c "probes" false -}}
{{- end -}}
{{- $pod := dict "selector" (merge (dict "kvgen.dev/node-role" $r) $selector) "labels" (merge (dict "kvgen.dev/node-role" $r) $labels) "annotations" $podAnnotations "resourceClaims" $resourceClaims "sidecar" $sidecar "vllm" $c "volumes" $volumes -}}
{{- $workloads = append $workloads (dict "kind" "StatefulSet" "name" (ternary $name (printf "%s-worker" $name) (eq $r "leader")) "replicas" (ternary 1 (sub $nodes 1) (eq $r "leader")) "ordinalsStart" (ternary "" 1 (eq $r "leader")) "pod" $pod) -}}
{{- end -}}
{{- else -}}
{{- $workloads = list (dict "kind" "Deployment" "name" $name "replicas" (int64 $v.replicas) "ordinalsStart" "" "pod" (dict "selector" $selector "labels" $labels "annotations" $podAnnotations "resourceClaims" $resourceClaims "sidecar" $sidecar "vllm" $vllm "volumes" $volumes)) -}}
{{- end -}}

{{- toJson (dict
  "name" $name "namespace" $namespace "labels" $labels "selector" $selector "annotations" $annotations
  "multiNode" $multiNode "headlessName" $headless "masterPort" $masterPort
  "service" (dict "type" $v.service.type "port" (int64 $v.service.port) "selector" (index $workloads 0).pod.selector)
  "launcher" $launcher "claimTemplate" $claimTemplate "gpuAccess" $access "workloads" $workloads "nodeSelector" $nodeSelector
  "tolerations" (default list $v.scheduling.tolerations) "affinity" (default dict $v.scheduling.affinity)
  "priorityClassName" (default "" $v.scheduling.priorityClassName)
  "decision" $d "warnings" $s.warnings) -}}
{{- end -}}

{{/* kvgen.image: repository:tag, or repository@digest; each field from the values, else the pin. */}}
{{- define "kvgen.image" -}}
{{- $spec := index . 0 -}}{{- $pin := index . 1 -}}
{{- $repo := default $pin.repository $spec.repository -}}
{{- $digest := default (default "" $pin.digest) $spec.digest -}}
{{- if $digest -}}{{- printf "%s@%s" $repo $digest -}}{{- else -}}{{- printf "%s:%s" $repo (default $pin.tag $spec.tag) -}}{{- end -}}
{{- end -}}

{{/* kvgen.resources: requests and limits from a sized container (kvgen's _resources). */}}
{{- define "kvgen.resources" -}}
{{- $size := index . 0 -}}{{- $gpu := index . 1 -}}{{- $claims := index . 2 -}}
{{- $requests := dict "memory" (include "kvgen.formatBytes" $size.memory) -}}
{{- if $size.cpu -}}{{- $_ := set $requests "cpu" $size.cpu -}}{{- end -}}
{{- if gt (int64 $size.ephemeral) 0 -}}{{- $_ := set $requests "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeral) -}}{{- end -}}
{{- $limits := dict "memory" (include "kvgen.formatBytes" $size.limit) -}}
{{- if $size.cpuLimit -}}{{- $_ := set $limits "cpu" $size.cpuLimit -}}{{- end -}}
{{- if hasKey $size "ephemeralLimit" -}}{{- $_ := set $limits "ephemeral-storage" (include "kvgen.formatBytes" $size.ephemeralLimit) -}}{{- end -}}
{{- range $k, $n := $gpu -}}{{- $_ := set $requests $k $n -}}{{- $_ := set $limits $k $n -}}{{- end -}}
{{- $out := dict "requests" $requests "limits" $limits -}}
{{- if $claims -}}{{- $_ := set $out "claims" $claims -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.withServer: gpuAccess in-container: the vLLM container's size plus the LMCache server's
(kvgen's plan.with_server); its CPU is the vLLM container's. */}}
{{- define "kvgen.withServer" -}}
{{- $a := index . 0 -}}{{- $b := index . 1 -}}
{{- $out := dict "cpu" $a.cpu "memory" (add (int64 $a.memory) (int64 $b.memory)) "limit" (add (int64 $a.limit) (int64 $b.limit)) "ephemeral" (add (int64 $a.ephemeral) (int64 $b.ephemeral)) -}}
{{- if hasKey $a "cpuLimit" -}}{{- $_ := set $out "cpuLimit" $a.cpuLimit -}}{{- end -}}
{{- if or (hasKey $a "ephemeralLimit") (hasKey $b "ephemeralLimit") -}}
{{- $_ := set $out "ephemeralLimit" (add (int64 (ternary $a.ephemeralLimit $a.ephemeral (hasKey $a "ephemeralLimit"))) (int64 (ternary $b.ephemeralLimit $b.ephemeral (hasKey $b "ephemeralLimit")))) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.lmcacheImage: the sidecar's image: the vLLM image, with the fields images.lmcache sets
in its place (a tag or digest there replaces the vLLM image's tag and digest together). */}}
{{- define "kvgen.lmcacheImage" -}}
{{- $own := index . 0 -}}{{- $spec := index . 1 -}}{{- $pin := index . 2 -}}
{{- $repo := default $pin.repository $spec.repository -}}
{{- $tag := default $pin.tag $spec.tag -}}
{{- $digest := default (default "" $pin.digest) $spec.digest -}}
{{- if or $own.tag $own.digest -}}{{- $tag = default $tag $own.tag -}}{{- $digest = default "" $own.digest -}}{{- end -}}
{{- $repo = default $repo $own.repository -}}
{{- if $digest -}}{{- printf "%s@%s" $repo $digest -}}{{- else -}}{{- printf "%s:%s" $repo $tag -}}{{- end -}}
{{- end -}}
