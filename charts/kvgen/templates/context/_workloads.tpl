{{/* The layout (kvgen.layout, _context.tpl), its pieces: the workloads and their pods. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.workloads: a Deployment, or the StatefulSets of rank 0 and ranks 1.. of a
multi-node server, each with its pod (Workload). Sets $s.workloads.
Usage: {{- include "kvgen.context.workloads" $s -}} (after every other piece)
*/}}
{{- define "kvgen.context.workloads" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $key := $s.W.labels -}}
{{- $own := deepCopy $s.meta.annotations -}}
{{/* a changed launcher rolls the pods */}}
{{- if $s.lmcache -}}{{- $_ := set $own $s.W.annotations.launcherSha256 $s.lmcache.launcher.sha256 -}}{{- end -}}
{{/* pod.annotations first (as written), kvgen's winning */}}
{{- $annotations := mergeOverwrite (deepCopy (default dict (default dict $v.pod).annotations)) $own -}}
{{- $nodeSelector := dict -}}
{{- $inst := $s.plan.instance -}}
{{- if and $inst.type $inst.cloudType -}}{{- $_ := set $nodeSelector $key.instanceType $inst.type -}}{{- end -}}
{{/* your own nodes' labels (a catalog row's nodeSelector), then the spec's: later ones win */}}
{{- $nodeSelector = mergeOverwrite $nodeSelector (deepCopy (default dict $inst.nodeSelector)) (deepCopy (default dict $v.scheduling.nodeSelector)) -}}
{{- $base := dict "annotations" $annotations "vllm" $s.vllm "volumes" $s.volumes -}}
{{- if $nodeSelector -}}{{- $_ := set $base "nodeSelector" $nodeSelector -}}{{- end -}}
{{/* the spec's tolerations, then the mode's (dra: the GPU taint; kvgen/plan/gpu_access.py tolerations) */}}
{{- with $s.plan.tolerations -}}{{- $_ := set $base "tolerations" (deepCopy .) -}}{{- end -}}
{{- with $v.scheduling.affinity -}}{{- $_ := set $base "affinity" . -}}{{- end -}}
{{- with $v.scheduling.priorityClassName -}}{{- $_ := set $base "priorityClassName" . -}}{{- end -}}
{{- with $v.scheduling.topologySpreadConstraints -}}{{- $_ := set $base "spreadFrom" . -}}{{- end -}}
{{- with $v.scheduling.runtimeClassName -}}{{- $_ := set $base "runtimeClassName" . -}}{{- end -}}
{{- with $v.scheduling.schedulerName -}}{{- $_ := set $base "schedulerName" . -}}{{- end -}}
{{- $podv := default dict $v.pod -}}
{{- if include "kvgen.isSet" (list $podv "terminationGracePeriodSeconds") -}}{{- $_ := set $base "terminationGracePeriodSeconds" (int64 $podv.terminationGracePeriodSeconds) -}}{{- end -}}
{{- $sa := default dict $podv.serviceAccount -}}
{{- with $s.plan.serviceAccountName -}}{{- $_ := set $base "serviceAccountName" . -}}{{- end -}}
{{- $_ := set $base "automountServiceAccountToken" (default false $sa.automountToken) -}}
{{- with $podv.imagePullSecrets -}}
{{- $secrets := list -}}{{- range $p := . -}}{{- $secrets = append $secrets (dict "name" $p.name) -}}{{- end -}}
{{- $_ := set $base "imagePullSecrets" $secrets -}}
{{- end -}}
{{- $_ := set $base "securityContext" (deepCopy $s.plan.podSecurityContext) -}}
{{- with $s.gpus.claimTemplate -}}{{- $_ := set $base "resourceClaims" (list (dict "name" "gpus" "resourceClaimTemplateName" .name)) -}}{{- end -}}
{{- if $s.download -}}{{- $_ := set $base "download" $s.download -}}{{- end -}}
{{- if $s.loraDownloads -}}{{- $_ := set $base "loraDownloads" $s.loraDownloads -}}{{- end -}}
{{- if $s.sidecar -}}{{- $_ := set $base "sidecar" $s.sidecar -}}{{- end -}}
{{- if $s.routingSidecar -}}
{{- $_ := set $base "routingSidecar" $s.routingSidecar -}}
{{- $_ := set $base "serviceAccountName" $s.routingAccess.serviceAccount -}}
{{- end -}}
{{/* model.cache.claimTemplate: every pod's own claim of the weights, and its retention */}}
{{- $claims := dict -}}
{{- if $s.plan.weights.claimTemplate -}}
{{- $t := $v.model.cache.claimTemplate -}}
{{- $size := "" -}}
{{- if include "kvgen.isSet" (list $t "size") -}}{{- $size = include "kvgen.sizeText" $t.size -}}
{{- else -}}{{- $size = include "kvgen.formatBytes" (int64 $s.plan.sizes.weightsClaim) -}}{{- end -}}
{{- $spec := dict "accessModes" (default (list "ReadWriteOnce") $t.accessModes) -}}
{{- if include "kvgen.isSet" (list $t "storageClassName") -}}{{- $_ := set $spec "storageClassName" $t.storageClassName -}}{{- end -}}
{{- $_ := set $spec "resources" (dict "requests" (dict "storage" $size)) -}}
{{- $r := default dict $t.retention -}}
{{- $claims = dict "volumeClaimTemplates" (list (dict "metadata" (dict "name" $s.W.modelPvc.volume) "spec" $spec)) "claimRetention" (dict "whenDeleted" (default "Delete" $r.whenDeleted) "whenScaled" (default "Retain" $r.whenScaled)) -}}
{{- end -}}
{{- $workloads := list -}}
{{- $lws := dict -}}
{{- if gt (int64 $v.parallelism.nodes) 1 -}}
{{- range $role := list "leader" "worker" -}}
{{- $pod := deepCopy $base -}}
{{- $_ := set $pod "selector" (merge (dict) $s.meta.selector (dict $key.nodeRole $role)) -}}
{{- $_ := set $pod "labels" (include "kvgen.podLabels" (list $s (dict $key.nodeRole $role)) | fromJson) -}}
{{- include "kvgen.spreadSelector" $pod -}}
{{- if eq $role "leader" -}}
{{- $workloads = append $workloads (merge (dict "kind" "StatefulSet" "name" $v.name "replicas" 1 "pod" $pod) $claims) -}}
{{- $_ := set $lws "pod" $pod -}}
{{- else -}}
{{/* ranks 1.. run engine workers only: no API server, no HTTP probes */}}
{{- $prefix := list -}}
{{- if eq (toString $s.gpuAccess.mode) "in-container" -}}{{- $prefix = $s.lmcache.args -}}{{- end -}}
{{- $_ := set $pod.vllm "args" (concat $prefix $s.vllmArgs.head (list "--headless") $s.vllmArgs.tail) -}}
{{- $_ := unset $pod.vllm "probes" -}}
{{- $workloads = append $workloads (merge (dict "kind" "StatefulSet" "name" (printf "%s-worker" $v.name) "replicas" (sub (int64 $v.parallelism.nodes) 1) "ordinalsStart" 1 "pod" $pod) $claims) -}}
{{- $_ := set $lws "workerPod" $pod -}}
{{- end -}}
{{- end -}}
{{/* multiNode.engine leaderworkerset: the same two pods, as one group of parallelism.nodes per replica */}}
{{- if eq $v.multiNode.engine "leaderworkerset" -}}
{{- $workloads = list (merge (dict "kind" "LeaderWorkerSet" "name" $v.name "replicas" (int64 $v.replicas) "size" (int64 $v.parallelism.nodes) "restartPolicy" $s.W.lws.restartPolicy "pod" $lws.pod "workerPod" $lws.workerPod) $claims) -}}
{{- end -}}
{{- else if $s.plan.weights.claimTemplate -}}
{{/* one claim per pod: a StatefulSet */}}
{{- $pod := merge (dict "selector" $s.meta.selector "labels" (include "kvgen.podLabels" (list $s dict) | fromJson)) $base -}}
{{- include "kvgen.spreadSelector" $pod -}}
{{- $workloads = list (merge (dict "kind" "StatefulSet" "name" $v.name "replicas" (int64 $v.replicas) "pod" $pod) $claims) -}}
{{- else -}}
{{- $pod := merge (dict "selector" $s.meta.selector "labels" (include "kvgen.podLabels" (list $s dict) | fromJson)) $base -}}
{{- include "kvgen.spreadSelector" $pod -}}
{{- $deployment := dict "kind" "Deployment" "name" $v.name "replicas" (int64 $v.replicas) "pod" $pod -}}
{{- $startup := $v.probes.startup -}}
{{- $delay := int64 0 -}}
{{- if include "kvgen.isSet" (list $startup "initialDelaySeconds") -}}{{- $delay = int64 $startup.initialDelaySeconds -}}{{- end -}}
{{/* the init container's download comes first (model.cache.claim) */}}
{{- $fill := int64 0 -}}
{{- if $s.download -}}{{- $fill = int64 $s.plan.sizes.downloadSeconds -}}{{- end -}}
{{- $_ := set $deployment "progressDeadlineSeconds" (add $delay (mul (int64 $startup.periodSeconds) (int64 $s.plan.sizes.startupFailureThreshold)) $fill (int64 $s.W.progressDeadlineMarginSeconds)) -}}
{{/* deployment.strategy, its unset fields wiring.deploymentStrategy's */}}
{{- $given := default dict (default dict $v.deployment).strategy -}}
{{- $strategy := dict "type" "Recreate" -}}
{{- if ne (toString $given.type) "Recreate" -}}
{{- $rolling := default dict $given.rollingUpdate -}}
{{- $roll := dict -}}
{{- range $k := list "maxSurge" "maxUnavailable" -}}
{{- $x := index $s.W.deploymentStrategy $k -}}
{{- if include "kvgen.isSet" (list $rolling $k) -}}{{- $x = index $rolling $k -}}{{- end -}}
{{- if not (kindIs "string" $x) -}}{{- $x = int64 $x -}}{{- end -}}
{{- $_ := set $roll $k $x -}}
{{- end -}}
{{- $strategy = dict "type" "RollingUpdate" "rollingUpdate" $roll -}}
{{- end -}}
{{- $_ := set $deployment "strategy" $strategy -}}
{{- $workloads = list $deployment -}}
{{- end -}}
{{- $_ := set $s "workloads" $workloads -}}
{{- end -}}

{{/*
kvgen.podLabels: a pod template's labels: pod.labels first (as written, winning over commonLabels), then
commonLabels and kvgen's own, then ROLE (a multi-node server's node role), as JSON.
Usage: {{- $labels := include "kvgen.podLabels" (list $s ROLE) | fromJson -}}
*/}}
{{- define "kvgen.podLabels" -}}
{{- $s := index . 0 -}}
{{- $own := default dict (default dict $s.V.pod).labels -}}
{{- toJson (mergeOverwrite (dict) $own $s.meta.commonLabels $s.meta.podLabels $own (index . 1)) -}}
{{- end -}}

{{/*
kvgen.spreadSelector: a pod's topologySpreadConstraints from the spec's, a constraint without
labelSelector spreading the pods of this workload (the pod's selector). Sets $pod.topologySpreadConstraints.
Usage: {{- include "kvgen.spreadSelector" $pod -}} (with $pod.selector set)
*/}}
{{- define "kvgen.spreadSelector" -}}
{{- $pod := . -}}
{{- $out := list -}}
{{- range $c := $pod.spreadFrom -}}
{{- if hasKey $c "labelSelector" -}}{{- $out = append $out $c -}}
{{- else -}}{{- $out = append $out (merge (deepCopy $c) (dict "labelSelector" (dict "matchLabels" $pod.selector))) -}}{{- end -}}
{{- end -}}
{{- $_ := unset $pod "spreadFrom" -}}
{{- if $out -}}{{- $_ := set $pod "topologySpreadConstraints" $out -}}{{- end -}}
{{- end -}}
