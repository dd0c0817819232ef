{{/*
What the Kubernetes API server (or the kubelet) would refuse in the objects the chart renders:
the chart's counterpart of kvgen/plan/apiserver.py, with the same patterns, limits and sources from
files/apiserver.yaml. Sizes are compared as floats (never as int64, which overflows at 8 EiB).
*/}}

{{/* kvgen.apiFits: "true" when a string fits one of the formats. Usage: include "kvgen.apiFits" (list $A "labelValue" $value) */}}
{{- define "kvgen.apiFits" -}}
{{- $f := index (index . 0).formats (index . 1) -}}
{{- $v := index . 2 -}}
{{- if and (kindIs "string" $v) (le (len $v) (int $f.maxLength)) (regexMatch $f.pattern $v) }}true{{ end -}}
{{- end -}}

{{/* kvgen.apiLabelKey: apimachinery IsLabelKey (IsQualifiedName): [DNS-1123 subdomain "/"] name. */}}
{{- define "kvgen.apiLabelKey" -}}
{{- $A := index . 0 -}}{{- $parts := splitList "/" (index . 1) -}}
{{- if and (le (len $parts) 2) (or (eq (len $parts) 1) (include "kvgen.apiFits" (list $A "dns1123Subdomain" (first $parts)))) (include "kvgen.apiFits" (list $A "labelKeyName" (last $parts))) }}true{{ end -}}
{{- end -}}

{{/* kvgen.apiConfigMapKey: apimachinery IsConfigMapKey, with hasChDirPrefix. */}}
{{- define "kvgen.apiConfigMapKey" -}}
{{- $v := index . 1 -}}
{{- if and (include "kvgen.apiFits" (list (index . 0) "configMapKey" $v)) (ne $v ".") (not (hasPrefix ".." $v)) }}true{{ end -}}
{{- end -}}

{{/* kvgen.bytesF: a size as a float number of bytes, never overflowing (1e300 for absurdly long numbers). */}}
{{- define "kvgen.bytesF" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- float64 . -}}
{{- else -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $digits := regexReplaceAll "^0+" (regexFind "^[0-9]+" $num) "" -}}
{{- $units := dict "" 1.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0 "E" 1000000000000000000.0 -}}
{{- if gt (len $digits) 18 -}}1e300{{- else -}}{{- mulf (float64 $num) (get $units (trimPrefix $num $q)) | ceil -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.cpuF: a CPU quantity (4, 0.5, "500m") in cores, as a float. */}}
{{- define "kvgen.cpuF" -}}
{{- $q := toString . -}}
{{- if hasSuffix "m" $q -}}{{- divf (float64 (trimSuffix "m" $q)) 1000.0 -}}{{- else -}}{{- float64 $q -}}{{- end -}}
{{- end -}}

{{/* kvgen.apiSize: a size must be at most maxBytes. Usage: include "kvgen.apiSize" (list $s $A "path" $value) */}}
{{- define "kvgen.apiSize" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $v := index . 3 -}}
{{- if not (kindIs "invalid" $v) -}}
{{- if gt (include "kvgen.bytesF" $v | float64) (float64 $A.maxBytes) -}}
{{- include "kvgen.problem" (list $s (index . 2) (printf "%v is above kvgen's bound of %s for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)" $v $A.maxBytesText) (printf "use at most %s" $A.maxBytesText)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.apiPVCSpec: ValidatePersistentVolumeClaimSpec. Usage: include "kvgen.apiPVCSpec" (list $s $A "path" $spec) */}}
{{- define "kvgen.apiPVCSpec" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $base := index . 2 -}}{{- $pvc := index . 3 -}}
{{- $modes := list -}}
{{- if kindIs "slice" $pvc.accessModes -}}{{- $modes = $pvc.accessModes -}}{{- end -}}
{{- if and (not $modes) (or (kindIs "slice" $pvc.accessModes) (kindIs "invalid" $pvc.accessModes)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.accessModes" $base) "at least 1 access mode is required; the API server refuses a claim without one (ValidatePersistentVolumeClaimSpec)" "add accessModes: [ReadWriteOnce] (one pod per claim)") -}}
{{- end -}}
{{- $others := false -}}
{{- range $j, $m := $modes -}}
{{- if and (kindIs "string" $m) (not (has $m $A.accessModes)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.accessModes[%d]" $base $j) (printf "unsupported access mode '%s' (ValidatePersistentVolumeClaimSpec)" $m) (printf "use one of %s" (join ", " $A.accessModes))) -}}
{{- else if and (has $m $A.accessModes) (ne $m "ReadWriteOncePod") -}}{{- $others = true -}}
{{- end -}}
{{- end -}}
{{- if and (has "ReadWriteOncePod" $modes) $others -}}
{{- include "kvgen.problem" (list $s (printf "%s.accessModes" $base) "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)" "keep ReadWriteOncePod alone") -}}
{{- end -}}
{{- $storage := "" -}}{{- $has := false -}}
{{- if and (kindIs "map" $pvc.resources) (kindIs "map" $pvc.resources.requests) (include "kvgen.isSet" (list $pvc.resources.requests "storage")) -}}
{{- $storage = $pvc.resources.requests.storage -}}{{- $has = true -}}
{{- end -}}
{{- $path := printf "%s.resources.requests.storage" $base -}}
{{- if not $has -}}
{{- include "kvgen.problem" (list $s $path "the claim has no storage request; the API server refuses it (ValidatePersistentVolumeClaimSpec: resources[storage] is required)" "set resources.requests.storage, e.g. 100Gi") -}}
{{- else if not (or (and (kindIs "string" $storage) (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" $storage)) (and (or (kindIs "float64" $storage) (kindIs "int64" $storage) (kindIs "int" $storage)) (eq (floor $storage) (float64 $storage)) (ge (float64 $storage) 0.0))) -}}
{{- include "kvgen.problem" (list $s $path (printf "%s is not a size (kvgen reads a claim's size as it reads every size)" (ternary (printf "'%s'" $storage) (printf "%v" $storage) (kindIs "string" $storage))) "write it as a Kubernetes quantity such as 100Gi, 512Mi or 1T") -}}
{{- else if le (include "kvgen.bytesF" $storage | float64) 0.0 -}}
{{- include "kvgen.problem" (list $s $path (printf "%v must be greater than zero (ValidatePersistentVolumeClaimSpec)" $storage) "request e.g. 100Gi") -}}
{{- else -}}
{{- include "kvgen.apiSize" (list $s $A $path $storage) -}}
{{- end -}}
{{- if and (kindIs "string" $pvc.storageClassName) $pvc.storageClassName (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $pvc.storageClassName))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.storageClassName" $base) (printf "'%s' is not a storage class name: %s (ValidatePersistentVolumeClaimSpec, ValidateClassName)" $pvc.storageClassName $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}
{{- if and (kindIs "string" $pvc.volumeMode) $pvc.volumeMode (not (has $pvc.volumeMode $A.volumeModes)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.volumeMode" $base) (printf "unsupported volume mode '%s' (ValidatePersistentVolumeClaimSpec)" $pvc.volumeMode) "use Filesystem (kvgen mounts the tier as a directory)") -}}
{{- end -}}
{{- end -}}

{{/* kvgen.apiKeySelector: validateSecretKeySelector. Usage: include "kvgen.apiKeySelector" (list $s $A "path" $ref "Secret") */}}
{{- define "kvgen.apiKeySelector" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $base := index . 2 -}}{{- $ref := index . 3 -}}
{{- if and (kindIs "string" $ref.name) $ref.name (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $ref.name))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $base) (printf "'%s' cannot name a %s: %s (validateSecretKeySelector)" $ref.name (index . 4) $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}
{{- if and (kindIs "string" $ref.key) $ref.key (not (include "kvgen.apiConfigMapKey" (list $A $ref.key))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.key" $base) (printf "'%s' is not %s (validateSecretKeySelector, IsConfigMapKey)" $ref.key $A.formats.configMapKey.what) "") -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkApiserver: every rule of kvgen/plan/apiserver.py check_spec, recorded as problems in $s. */}}
{{- define "kvgen.checkApiserver" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $A := $s.F.Get "files/apiserver.yaml" | fromYaml -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $res := default dict $v.resources -}}

{{/* sizes: every Size of the spec, then the emptyDir tiers' sum (when each is within the bound) */}}
{{- $before := len $s.errs -}}
{{- include "kvgen.apiSize" (list $s $A "model.weights" $v.model.weights) -}}
{{- range $f := list "gpuMemory" "memory" "localDisk" -}}
{{- include "kvgen.apiSize" (list $s $A (printf "instance.%s" $f) (index $v.instance $f)) -}}
{{- end -}}
{{- include "kvgen.apiSize" (list $s $A "kvCacheOffloading.cpu" $o.cpu) -}}
{{- $tiersF := 0.0 -}}
{{- range $n, $t := $o.secondary -}}
{{- if include "kvgen.isSet" (list $t.fileSystem "emptyDir") -}}
{{- include "kvgen.apiSize" (list $s $A (printf "kvCacheOffloading.secondary[%d].fileSystem.emptyDir.size" $n) $t.fileSystem.emptyDir.size) -}}
{{- $tiersF = addf $tiersF (include "kvgen.bytesF" $t.fileSystem.emptyDir.size | float64) -}}
{{- end -}}
{{- end -}}
{{- range $c := list "vllm" "lmcacheServer" -}}
{{- $cr := default dict (index $res $c) -}}
{{- range $kind := list "requests" "limits" -}}
{{- range $r := list "memory" "ephemeral-storage" -}}
{{- include "kvgen.apiSize" (list $s $A (printf "resources.%s.%s.%s" $c $kind $r) (index (default dict (index $cr $kind)) $r)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $f := list "shm" "modelCache" -}}
{{- include "kvgen.apiSize" (list $s $A (printf "resources.%s" $f) (index $res $f)) -}}
{{- end -}}
{{- if and (gt $tiersF (float64 $A.maxBytes)) (eq (len $s.errs) $before) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.secondary" (printf "the emptyDir tiers add up to more than kvgen's bound of %s for the pod's ephemeral storage" $A.maxBytesText) (printf "keep their sum at most %s" $A.maxBytesText)) -}}
{{- end -}}

{{/* resources: ValidateContainerResourceRequirements (a request above its limit) */}}
{{- range $c := list "vllm" "lmcacheServer" -}}
{{- $cr := default dict (index $res $c) -}}
{{- $req := default dict $cr.requests -}}{{- $lim := default dict $cr.limits -}}
{{- range $r := list "memory" "ephemeral-storage" -}}
{{- if and (include "kvgen.isSet" (list $req $r)) (include "kvgen.isSet" (list $lim $r)) (gt (include "kvgen.bytesF" (index $req $r) | float64) (include "kvgen.bytesF" (index $lim $r) | float64)) -}}
{{- include "kvgen.problem" (list $s (printf "resources.%s.requests.%s" $c $r) (printf "request %v is above its limit %v; the API server refuses a container whose %s request exceeds its limit (ValidateContainerResourceRequirements)" (index $req $r) (index $lim $r) $r) (printf "lower resources.%s.requests.%s or raise resources.%s.limits.%s" $c $r $c $r)) -}}
{{- end -}}
{{- end -}}
{{- if and (include "kvgen.isSet" (list $req "cpu")) (include "kvgen.isSet" (list $lim "cpu")) (gt (include "kvgen.cpuF" $req.cpu | float64) (include "kvgen.cpuF" $lim.cpu | float64)) -}}
{{- include "kvgen.problem" (list $s (printf "resources.%s.requests.cpu" $c) (printf "request %v is above its limit %v; the API server refuses a container whose cpu request exceeds its limit (ValidateContainerResourceRequirements)" $req.cpu $lim.cpu) (printf "lower resources.%s.requests.cpu or raise resources.%s.limits.cpu" $c $c)) -}}
{{- end -}}
{{- end -}}

{{/* disk tiers: claim templates (ValidatePersistentVolumeClaimSpec) and existing claims */}}
{{- range $n, $t := $o.secondary -}}
{{- $base := printf "kvCacheOffloading.secondary[%d].fileSystem.pvc" $n -}}
{{- if include "kvgen.isSet" (list $t.fileSystem "pvc") -}}
{{- if include "kvgen.isSet" (list $t.fileSystem.pvc "spec") -}}
{{- include "kvgen.apiPVCSpec" (list $s $A (printf "%s.spec" $base) $t.fileSystem.pvc.spec) -}}
{{- else if include "kvgen.isSet" (list $t.fileSystem.pvc "ref") -}}
{{- $ref := $t.fileSystem.pvc.ref -}}
{{- if not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $ref.name)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.ref.name" $base) (printf "'%s' cannot name a PersistentVolumeClaim: %s; the pod would wait for a claim that cannot exist (ValidatePersistentVolumeClaim, ValidatePersistentVolumeName)" $ref.name $A.formats.dns1123Subdomain.what) "use the claim's metadata.name") -}}
{{- end -}}
{{- if and (kindIs "string" $ref.path) $ref.path -}}
{{- if hasPrefix "/" $ref.path -}}
{{- include "kvgen.problem" (list $s (printf "%s.ref.path" $base) (printf "'%s' must be a relative path inside the claim (it becomes the mount's subPath; validateLocalDescendingPath)" $ref.path) (printf "write it as '%s'" (regexReplaceAll "^/+" $ref.path ""))) -}}
{{- end -}}
{{- if has ".." (splitList "/" $ref.path) -}}
{{- include "kvgen.problem" (list $s (printf "%s.ref.path" $base) (printf "'%s' must not contain '..' (it becomes the mount's subPath; validateLocalDescendingPath)" $ref.path) "name a directory inside the claim") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* tolerations: ValidateTolerations, validateTaintEffect */}}
{{- $sched := default dict $v.scheduling -}}
{{- range $i, $tol := default list $sched.tolerations -}}
{{- if kindIs "map" $tol -}}
{{- $base := printf "scheduling.tolerations[%d]" $i -}}
{{- $key := "" -}}{{- if kindIs "string" $tol.key -}}{{- $key = $tol.key -}}{{- end -}}
{{- $op := "" -}}{{- if kindIs "string" $tol.operator -}}{{- $op = $tol.operator -}}{{- end -}}
{{- $val := "" -}}{{- if kindIs "string" $tol.value -}}{{- $val = $tol.value -}}{{- end -}}
{{- $eff := "" -}}{{- if kindIs "string" $tol.effect -}}{{- $eff = $tol.effect -}}{{- end -}}
{{- $secs := and (or (kindIs "float64" $tol.tolerationSeconds) (kindIs "int64" $tol.tolerationSeconds) (kindIs "int" $tol.tolerationSeconds)) true -}}
{{- if and $key (not (include "kvgen.apiLabelKey" (list $A $key))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.key" $base) (printf "'%s' is not %s (ValidateTolerations)" $key $A.formats.labelKeyName.what) "") -}}
{{- end -}}
{{- if and (not $key) (ne $op "Exists") -}}
{{- include "kvgen.problem" (list $s (printf "%s.operator" $base) "operator must be Exists when key is empty (which means \"match all values and all keys\") (ValidateTolerations)" "set operator: Exists, or name the taint's key") -}}
{{- end -}}
{{- if and $secs (ne $eff "NoExecute") -}}
{{- include "kvgen.problem" (list $s (printf "%s.effect" $base) "effect must be NoExecute when tolerationSeconds is set (ValidateTolerations)" "set effect: NoExecute, or remove tolerationSeconds") -}}
{{- end -}}
{{- if and $secs (or (ge (float64 $tol.tolerationSeconds) 9223372036854775807.0) (lt (float64 $tol.tolerationSeconds) -9223372036854775808.0)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.tolerationSeconds" $base) (printf "%v does not fit the int64 field" $tol.tolerationSeconds) "") -}}
{{- end -}}
{{- if or (eq $op "Equal") (eq $op "") -}}
{{- if not (include "kvgen.apiFits" (list $A "labelValue" $val)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.value" $base) (printf "'%s' is not %s (ValidateTolerations)" $val $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- else if eq $op "Exists" -}}
{{- if $val -}}
{{- include "kvgen.problem" (list $s (printf "%s.value" $base) "value must be empty when operator is Exists (ValidateTolerations)" "remove value, or use operator: Equal") -}}
{{- end -}}
{{- else -}}
{{- include "kvgen.problem" (list $s (printf "%s.operator" $base) (printf "unsupported operator '%s' (ValidateTolerations)" $op) (printf "use one of %s" (join ", " $A.tolerationOperators))) -}}
{{- end -}}
{{- if and $eff (not (has $eff $A.taintEffects)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.effect" $base) (printf "unsupported effect '%s' (validateTaintEffect)" $eff) (printf "use one of %s" (join ", " $A.taintEffects))) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* environment: validateEnvVarValueFrom, validateSecretKeySelector */}}
{{- with $v.model.hfTokenSecret -}}{{- include "kvgen.apiKeySelector" (list $s $A "model.hfTokenSecret" . "Secret") -}}{{- end -}}
{{- if and (include "kvgen.isSet" (list $v.kvCacheOffloading "remote")) (kindIs "map" $v.kvCacheOffloading.remote) -}}
{{- with $v.kvCacheOffloading.remote.passwordSecret -}}{{- include "kvgen.apiKeySelector" (list $s $A "kvCacheOffloading.remote.passwordSecret" . "Secret") -}}{{- end -}}
{{- end -}}
{{- if kindIs "map" $v.service -}}
{{- with $v.service.apiKeySecret -}}{{- include "kvgen.apiKeySelector" (list $s $A "service.apiKeySecret" . "Secret") -}}{{- end -}}
{{- end -}}
{{- range $i, $e := default list $v.vllm.env -}}
{{- if kindIs "map" $e.valueFrom -}}
{{- $base := printf "vllm.env[%d].valueFrom" $i -}}
{{- $sources := list -}}
{{- range $src := $A.envVarSources -}}{{- if include "kvgen.isSet" (list $e.valueFrom $src) -}}{{- $sources = append $sources $src -}}{{- end -}}{{- end -}}
{{- if not $sources -}}
{{- include "kvgen.problem" (list $s $base (printf "must specify one of: %s (validateEnvVarValueFrom)" (join ", " $A.envVarSources)) "") -}}
{{- else if and (kindIs "string" $e.value) $e.value -}}
{{- include "kvgen.problem" (list $s $base "may not be specified when value is not empty (validateEnvVarValueFrom)" "keep either value or valueFrom") -}}
{{- else if gt (len $sources) 1 -}}
{{- include "kvgen.problem" (list $s $base (printf "may not have more than one source at a time (%s; validateEnvVarValueFrom)" (join ", " $sources)) "keep one") -}}
{{- end -}}
{{- range $src := list "secretKeyRef" "configMapKeyRef" -}}
{{- if kindIs "map" (index $e.valueFrom $src) -}}
{{- include "kvgen.apiKeySelector" (list $s $A (printf "%s.%s" $base $src) (index $e.valueFrom $src) (ternary "Secret" "ConfigMap" (eq $src "secretKeyRef"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* labels: ValidateLabels on metadata.labels (ValidateObjectMeta) and spec.nodeSelector (ValidatePodSpec); image tags (kubelet) */}}
{{- $images := default dict $v.images -}}
{{- if hasKey $s "inst" -}}
{{- $field := ternary "vllm" "vllmCpu" (gt $s.inst.gpus 0) -}}
{{- $img := default dict (index $images $field) -}}
{{- if and (kindIs "string" $img.tag) (not (include "kvgen.apiFits" (list $A "labelValue" $img.tag))) -}}
{{- include "kvgen.problem" (list $s (printf "images.%s.tag" $field) (printf "'%s' becomes the label app.kubernetes.io/version, which must be %s (ValidateLabels, IsValidLabelValue)" $img.tag $A.formats.labelValue.what) "use a tag of at most 63 characters, or pin the image by digest and keep a short tag") -}}
{{- end -}}
{{- end -}}
{{- range $field := list "vllm" "lmcache" "vllmCpu" -}}
{{- $img := default dict (index $images $field) -}}
{{- if and (kindIs "string" $img.repository) (not (include "kvgen.apiFits" (list $A "imageRepository" $img.repository))) -}}
{{- include "kvgen.problem" (list $s (printf "images.%s.repository" $field) (printf "'%s' is not %s; the kubelet refuses the image (InvalidImageName) and the pod never starts" $img.repository $A.formats.imageRepository.what) "write the repository alone, e.g. registry.example.com/vllm/vllm-openai; the tag and digest have their own fields") -}}
{{- end -}}
{{- if and (kindIs "string" $img.tag) (not (include "kvgen.apiFits" (list $A "imageTag" $img.tag))) -}}
{{- include "kvgen.problem" (list $s (printf "images.%s.tag" $field) (printf "'%s' is not %s; the kubelet refuses the image (InvalidImageName) and the pod never starts" $img.tag $A.formats.imageTag.what) "") -}}
{{- end -}}
{{- end -}}
{{- if and (kindIs "string" $v.instance.type) (not (include "kvgen.apiFits" (list $A "labelValue" $v.instance.type))) -}}
{{- include "kvgen.problem" (list $s "instance.type" (printf "'%s' becomes the node selector node.kubernetes.io/instance-type, whose value must be %s (ValidatePodSpec: ValidateLabels)" $v.instance.type $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- range $k, $val := default dict $sched.nodeSelector -}}
{{- if not (include "kvgen.apiLabelKey" (list $A $k)) -}}
{{- include "kvgen.problem" (list $s (printf "scheduling.nodeSelector.%s" $k) (printf "'%s' is not %s (ValidatePodSpec: ValidateLabels)" $k $A.formats.labelKeyName.what) "") -}}
{{- end -}}
{{- if not (include "kvgen.apiFits" (list $A "labelValue" $val)) -}}
{{- include "kvgen.problem" (list $s (printf "scheduling.nodeSelector.%s" $k) (printf "'%s' is not %s (ValidatePodSpec: ValidateLabels)" $val $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- end -}}
{{/* the monitors' metadata.labels */}}
{{- range $k, $val := default dict $v.metrics.labels -}}
{{- if not (include "kvgen.apiLabelKey" (list $A $k)) -}}
{{- include "kvgen.problem" (list $s (printf "metrics.labels.%s" $k) (printf "'%s' is not %s (ValidateObjectMeta: ValidateLabels)" $k $A.formats.labelKeyName.what) "") -}}
{{- end -}}
{{- if not (include "kvgen.apiFits" (list $A "labelValue" $val)) -}}
{{- include "kvgen.problem" (list $s (printf "metrics.labels.%s" $k) (printf "'%s' is not %s (ValidateObjectMeta: ValidateLabels)" $val $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- end -}}

{{/* workloads: int32 replicas, the StatefulSets' controller-revision-hash label, priorityClassName */}}
{{- if gt (float64 $v.replicas) (float64 $A.int32Max) -}}
{{- include "kvgen.problem" (list $s "replicas" (printf "%.0f does not fit the Deployment's replicas, an int32 (at most %d)" (float64 $v.replicas) (int64 $A.int32Max)) (printf "use at most %d" (int64 $A.int32Max))) -}}
{{- end -}}
{{- $nodes := float64 $v.parallelism.nodes -}}
{{- if and (gt $nodes 1.0) (eq $v.multiNode.engine "leaderworkerset") -}}
{{- if gt (float64 $v.replicas) (float64 $A.lwsReplicasMax) -}}
{{- include "kvgen.problem" (list $s "replicas" (printf "%.0f is above the LeaderWorkerSet's bound on replicas (at most %d, maximum in the LeaderWorkerSet CRD)" (float64 $v.replicas) (int64 $A.lwsReplicasMax)) (printf "use at most %d" (int64 $A.lwsReplicasMax))) -}}
{{- end -}}
{{- end -}}
{{- if gt $nodes 1.0 -}}
{{- $room := sub (sub (int64 $A.formats.labelValue.maxLength) 1) (int64 $A.revisionHashMaxLength) -}}
{{/* a LeaderWorkerSet's controller makes the leaders' <name> and each group's workers' <name>-<group> */}}
{{- $names := list $v.name (printf "%s-worker" $v.name) -}}
{{- if eq $v.multiNode.engine "leaderworkerset" -}}{{- $names = list $v.name (printf "%s-%d" $v.name (max (sub (int64 $v.replicas) 1) 0)) -}}{{- end -}}
{{- range $sts := $names -}}
{{- if gt (len $sts) (int $room) -}}
{{- include "kvgen.problem" (list $s "name" (printf "the StatefulSet '%s' (%d characters) can never create its pods: they carry the label controller-revision-hash=<StatefulSet name>-<hash of up to %d characters>, and a label value is at most %d characters, so a StatefulSet's name may have at most %d" $sts (len $sts) (int64 $A.revisionHashMaxLength) (int64 $A.formats.labelValue.maxLength) $room) (printf "use a name of at most %d characters for a server spanning several nodes" (sub (len $v.name) (sub (len $sts) $room)))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (kindIs "string" $sched.priorityClassName) $sched.priorityClassName (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $sched.priorityClassName))) -}}
{{- include "kvgen.problem" (list $s "scheduling.priorityClassName" (printf "'%s' is not %s (ValidatePodSpec: ValidatePriorityClassName)" $sched.priorityClassName $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}

{{/* model.uri pvc://CLAIM/PATH: the claim's name and the mount's subPath */}}
{{- if $v.model.uri -}}
{{- $pvc := include "kvgen.modelPvc" $v | fromJson -}}
{{- if not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $pvc.claim)) -}}
{{- include "kvgen.problem" (list $s "model.uri" (printf "'%s' cannot name a PersistentVolumeClaim: %s; the pod would wait for a claim that cannot exist (ValidatePersistentVolumeClaim, ValidatePersistentVolumeName)" $pvc.claim $A.formats.dns1123Subdomain.what) "use the claim's metadata.name") -}}
{{- end -}}
{{- if has ".." (splitList "/" $pvc.path) -}}
{{- include "kvgen.problem" (list $s "model.uri" (printf "'%s' must not contain '..' (it becomes the mount's subPath; validateLocalDescendingPath)" $pvc.path) "name a directory inside the claim") -}}
{{- end -}}
{{- end -}}
{{/* pod settings: ValidateLabels / ValidateAnnotations (ValidateObjectMeta), ValidatePodSpec's names,
     validateTopologySpreadConstraints; kvgen's own label and annotation keys may not be overridden */}}
{{- $podv := default dict $v.pod -}}
{{- $rtw := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring -}}
{{- $ownLabels := list -}}{{- range $k, $l := $rtw.labels -}}{{- if ne $k "instanceType" -}}{{- $ownLabels = append $ownLabels $l -}}{{- end -}}{{- end -}}
{{- $ownLabels = sortAlpha $ownLabels -}}
{{- $ownNotes := list -}}{{- range $k, $l := $rtw.annotations -}}{{- $ownNotes = append $ownNotes $l -}}{{- end -}}
{{- $ownNotes = sortAlpha $ownNotes -}}
{{- range $k, $val := default dict $podv.labels -}}
{{- if has $k $ownLabels -}}
{{- include "kvgen.problem" (list $s (printf "pod.labels.%s" $k) (printf "'%s' is a label kvgen sets itself (its selector and bookkeeping: %s)" $k (join ", " $ownLabels)) "use another key") -}}
{{- else if not (include "kvgen.apiLabelKey" (list $A $k)) -}}
{{- include "kvgen.problem" (list $s (printf "pod.labels.%s" $k) (printf "'%s' is not %s (ValidateLabels)" $k $A.formats.labelKeyName.what) "") -}}
{{- end -}}
{{- if not (include "kvgen.apiFits" (list $A "labelValue" $val)) -}}
{{- include "kvgen.problem" (list $s (printf "pod.labels.%s" $k) (printf "'%s' is not %s (ValidateLabels)" $val $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- end -}}
{{- range $k, $val := default dict $podv.annotations -}}
{{- if has $k $ownNotes -}}
{{- include "kvgen.problem" (list $s (printf "pod.annotations.%s" $k) (printf "'%s' is an annotation kvgen sets itself (%s)" $k (join ", " $ownNotes)) "use another key") -}}
{{- else if not (include "kvgen.apiLabelKey" (list $A (lower $k))) -}}
{{- include "kvgen.problem" (list $s (printf "pod.annotations.%s" $k) (printf "'%s' is not %s (ValidateAnnotations)" $k $A.formats.labelKeyName.what) "") -}}
{{- end -}}
{{- end -}}
{{- $notesTotal := 0 -}}
{{- range $k, $val := default dict $podv.annotations -}}{{- $notesTotal = add $notesTotal (len $k) (len (toString $val)) -}}{{- end -}}
{{- $notesRoom := sub (int64 $A.totalAnnotationSizeLimit) (int64 $A.annotationsReserve) -}}
{{- if gt (int64 $notesTotal) $notesRoom -}}
{{- include "kvgen.problem" (list $s "pod.annotations" (printf "the annotations add up to %d bytes (keys and values); the API server refuses more than %d in all (ValidateAnnotationsSize), and kvgen keeps %d of them for its own annotations" (int64 $notesTotal) (int64 $A.totalAnnotationSizeLimit) (int64 $A.annotationsReserve)) (printf "keep pod.annotations at most %d bytes; put large data in a ConfigMap" $notesRoom)) -}}
{{- end -}}
{{- range $i, $ref := default list $podv.imagePullSecrets -}}
{{- if and (kindIs "string" $ref.name) $ref.name (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $ref.name))) -}}
{{- include "kvgen.problem" (list $s (printf "pod.imagePullSecrets[%d].name" $i) (printf "'%s' is not %s; no Secret can have this name (ValidateSecretName)" $ref.name $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}
{{- end -}}
{{- $saName := (default dict $podv.serviceAccount).name -}}
{{- if and (kindIs "string" $saName) $saName (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $saName))) -}}
{{- include "kvgen.problem" (list $s "pod.serviceAccount.name" (printf "'%s' is not %s (ValidatePodSpec: ValidateServiceAccountName)" $saName $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}
{{- if and (kindIs "string" $sched.runtimeClassName) $sched.runtimeClassName (not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $sched.runtimeClassName))) -}}
{{- include "kvgen.problem" (list $s "scheduling.runtimeClassName" (printf "'%s' is not %s (ValidatePodSpec: ValidateRuntimeClassName)" $sched.runtimeClassName $A.formats.dns1123Subdomain.what) "") -}}
{{- end -}}
{{- range $i, $c := default list $sched.topologySpreadConstraints -}}
{{- $base := printf "scheduling.topologySpreadConstraints[%d]" $i -}}
{{- if and (or (kindIs "int64" $c.maxSkew) (kindIs "float64" $c.maxSkew)) (le (float64 $c.maxSkew) 0.0) -}}
{{- include "kvgen.problem" (list $s (printf "%s.maxSkew" $base) (printf "%.0f must be greater than zero (validateTopologySpreadConstraints)" (float64 $c.maxSkew)) "") -}}
{{- end -}}
{{- if and (kindIs "string" $c.topologyKey) (not (include "kvgen.apiLabelKey" (list $A $c.topologyKey))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.topologyKey" $base) (printf "'%s' is not %s (validateTopologySpreadConstraints)" $c.topologyKey $A.formats.labelKeyName.what) "e.g. topology.kubernetes.io/zone or kubernetes.io/hostname") -}}
{{- end -}}
{{- if and (kindIs "string" $c.whenUnsatisfiable) (not (has $c.whenUnsatisfiable $A.whenUnsatisfiable)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.whenUnsatisfiable" $base) (printf "unsupported value '%s' (validateWhenUnsatisfiable)" $c.whenUnsatisfiable) (printf "use one of %s" (join ", " $A.whenUnsatisfiable))) -}}
{{- end -}}
{{- end -}}

{{/* resources.extra: IsExtendedResourceName (validateResourceName), and no GPU of kvgen's own */}}
{{- range $name, $n := default dict (default dict $v.resources).extra -}}
{{- $gpu := false -}}
{{- range $g := $A.gpuResources -}}{{- if or (eq $name $g) (and (hasSuffix "-" $g) (hasPrefix $g $name)) -}}{{- $gpu = true -}}{{- end -}}{{- end -}}
{{- if $gpu -}}
{{- include "kvgen.problem" (list $s (printf "resources.extra.%s" $name) (printf "%s is requested by kvgen itself, from instance and parallelism" $name) "remove it; set instance.gpus, instance.mig or parallelism") -}}
{{- else if or (not (contains "/" $name)) (contains $A.nativeResourceDomain $name) (not (include "kvgen.apiLabelKey" (list $A $name))) -}}
{{- include "kvgen.problem" (list $s (printf "resources.extra.%s" $name) (printf "'%s' is not an extended resource name: a domain-prefixed name such as vpc.amazonaws.com/efa or rdma/ib, outside kubernetes.io (IsExtendedResourceName)" $name) "") -}}
{{- end -}}
{{- end -}}

{{/* pod.volumes, vllm.volumeMounts: ValidateVolumes, validateVolumeMounts, and none of kvgen's own names and paths */}}
{{- $reserved := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.reserved -}}
{{- $names := list -}}
{{- range $i, $vol := default list (default dict $v.pod).volumes -}}
{{- $sources := list -}}
{{- range $src := $A.volumeSources -}}{{- if include "kvgen.isSet" (list $vol $src) -}}{{- $sources = append $sources $src -}}{{- end -}}{{- end -}}
{{- if ne (len $sources) 1 -}}
{{- include "kvgen.problem" (list $s (printf "pod.volumes[%d]" $i) (ternary (printf "may not specify more than 1 volume type (%s; validateVolumeSource)" (join ", " $sources)) "must specify a volume type (validateVolumeSource)" (gt (len $sources) 1)) "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir") -}}
{{- end -}}
{{- if kindIs "string" $vol.name -}}
{{- $p := printf "pod.volumes[%d].name" $i -}}
{{- $ours := has $vol.name $reserved.volumes -}}
{{- range $pre := $reserved.volumePrefixes -}}{{- if hasPrefix $pre $vol.name -}}{{- $ours = true -}}{{- end -}}{{- end -}}
{{- if $ours -}}
{{- include "kvgen.problem" (list $s $p (printf "'%s' is the name of a volume kvgen renders itself" $vol.name) "use another name") -}}
{{- else if not (include "kvgen.apiFits" (list $A "dns1123Label" $vol.name)) -}}
{{- include "kvgen.problem" (list $s $p (printf "'%s' is not %s (ValidateVolumes)" $vol.name $A.formats.dns1123Label.what) "") -}}
{{- else if has $vol.name $names -}}
{{- include "kvgen.problem" (list $s $p (printf "'%s': duplicate volume name (ValidateVolumes)" $vol.name) "") -}}
{{- end -}}
{{- $names = append $names $vol.name -}}
{{- end -}}
{{- end -}}
{{- $paths := list -}}
{{- range $i, $m := default list $v.vllm.volumeMounts -}}
{{- $base := printf "vllm.volumeMounts[%d]" $i -}}
{{- if and (kindIs "string" $m.name) (not (has $m.name $names)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $base) (printf "'%s' is not a volume of pod.volumes (validateVolumeMounts: not found)" $m.name) "add the volume to pod.volumes") -}}
{{- end -}}
{{- if kindIs "string" $m.mountPath -}}
{{- $ours := list -}}
{{- range $r := $reserved.paths -}}{{- if include "kvgen.pathInside" (list $m.mountPath $r) -}}{{- $ours = append $ours $r -}}{{- end -}}{{- end -}}
{{- range $pre := $reserved.pathPrefixes -}}{{- if or (hasPrefix $pre $m.mountPath) (include "kvgen.pathInside" (list $m.mountPath $pre)) -}}{{- $ours = append $ours (printf "%sN" $pre) -}}{{- end -}}{{- end -}}
{{- $clean := trimSuffix "/" $m.mountPath -}}
{{- if $ours -}}
{{- include "kvgen.problem" (list $s (printf "%s.mountPath" $base) (printf "'%s' would hide or sit inside a path kvgen mounts itself (%s)" $m.mountPath (first $ours)) "mount it elsewhere") -}}
{{- else if has $clean $paths -}}
{{- include "kvgen.problem" (list $s (printf "%s.mountPath" $base) (printf "'%s': must be unique (validateVolumeMounts)" $m.mountPath) "") -}}
{{- end -}}
{{- $paths = append $paths $clean -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.pathInside: "true" when one path is the other or inside it (kvgen/plan/apiserver.py _inside). */}}
{{- define "kvgen.pathInside" -}}
{{- $a := default "/" (trimSuffix "/" (index . 0)) -}}{{- $b := default "/" (trimSuffix "/" (index . 1)) -}}
{{- if or (eq $a $b) (hasPrefix (printf "%s/" (trimSuffix "/" $b)) $a) (hasPrefix (printf "%s/" (trimSuffix "/" $a)) $b) }}true{{ end -}}
{{- end -}}
