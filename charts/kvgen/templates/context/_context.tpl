{{/*
kvgen.context: every value the object templates lay out, as JSON (kvgen's Context type). Keys are
camelCase; an absent value is a key left out. It plans (kvgen.plan) and writes the plan document
(kvgen.planDocument), then lays the objects out (kvgen.layout, below: written once, here; kvgen runs
its translation, made by tools/gotemplate.py). Values with problems give {} (the templates then
render nothing), except in templates/validate.yaml, where kvgen.plan fails listing every
problem: the error always names that file, whichever template Helm renders first.
Usage: {{- $c := include "kvgen.context" . | fromJson -}}

Computed once per render. Every object template (and NOTES.txt, validate.yaml, tests/) starts
with that include, so the first template that asks keeps the context, as its JSON, under a
private key of the root context ($, not .Values), and every later one reads it there: 16
computations became one (issue 11). Safe because Helm runs every template of one chart with one
and the same root map, fresh for each render. Helm v4 pkg/engine/engine.go (v4.2.3, the engine
helm-python-sdk embeds; the same in v4.1.4, the CLI the tests run, and in v3.19): recAllTpls
(lines 534-582) makes one map `next` per chart and hands it to each of the chart's templates
(`vals: next`, line 577); render (lines 302-305) executes each file with that map, only setting
its "Template" key. `helm template`, install and upgrade (pkg/action/action.go renderResources,
lines 304-314) and `helm lint` (pkg/chart/v2/lint/rules/template.go, line 138) call
engine.Render once per render; a parent chart and each subchart get maps of their own. Of what
differs per file (.Template), the context reads only whether it is validate.yaml (failHere):
there a kept {} (values with problems) is computed again, so that file still fails listing every
problem, whichever template Helm renders first (templates/tests/ come first).
*/}}
{{- define "kvgen.context" -}}
{{- $key := "kvgen.context (computed once per render)" -}}
{{- $kept := index . $key -}}
{{- if and $kept (not (and (eq $kept "{}") (hasSuffix "/templates/validate.yaml" .Template.Name))) -}}
{{- $kept -}}
{{- else -}}
{{- $json := include "kvgen.buildContext" . -}}
{{- $_ := set . $key $json -}}
{{- $json -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.buildContext: kvgen.context computed (kvgen.context keeps it for the rest of the render).
Usage: {{- $json := include "kvgen.buildContext" . -}}
*/}}
{{- define "kvgen.buildContext" -}}
{{/* the Kubernetes version (kvgen/plan/kube_target.py): the cluster's (helm install) or
     --kube-version's; Helm's own default (helm template without --kube-version: v<the client-go
     Helm was built with>.0) is replaced by the spec's kubeVersion, else kvgen's default
     (files/kubernetes.json), so that both faces render for the same version */}}
{{- $kube := .Capabilities.KubeVersion.Version -}}
{{- $given := ne $kube (printf "%v.0" .Capabilities.HelmVersion.KubeClientVersion) -}}
{{- if not $given -}}
{{- $kube = printf "v%s.0" (default (.Files.Get "files/kubernetes.json" | fromJson).defaultVersion .Values.kubeVersion) -}}
{{- end -}}
{{- $s := dict "V" .Values "F" .Files "errs" list "kube" $kube "namespace" (default .Release.Namespace .Values.namespace) -}}
{{/* the spec's kubeVersion is one kvgen has Kubernetes schemas for (files/kubernetes.json supported) */}}
{{- $K := .Files.Get "files/kubernetes.json" | fromJson -}}
{{- $written := regexFind "^[0-9]+\\.[0-9]+" (toString (default "" .Values.kubeVersion)) -}}
{{- $unsupported := false -}}
{{- if and $written (not (has $written $K.supported)) -}}
{{- $unsupported = true -}}
{{- if semverCompare (printf "<%s.0-0" (first $K.supported)) (printf "%s.0" $written) -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "Kubernetes %s is too old: kvgen's native sidecars need %s or newer" $written (first $K.supported)) "use a version kvgen has Kubernetes schemas for") -}}
{{- else -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "no schemas for Kubernetes %s; supported: %s" $written (join ", " $K.supported)) "use a version kvgen has Kubernetes schemas for") -}}
{{- end -}}
{{- end -}}
{{- if and $given .Values.kubeVersion (not $unsupported) (semverCompare (printf "<%s.0-0" .Values.kubeVersion) $kube) -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "the spec is written for Kubernetes %s, but the output is for Kubernetes %s, which is older" .Values.kubeVersion (regexFind "[0-9]+\\.[0-9]+" $kube)) (printf "render for %s or newer (kvgen --kube-version, helm template --kube-version; helm install uses the cluster's), or set kubeVersion to the version the cluster runs" .Values.kubeVersion)) -}}
{{- end -}}
{{- $_ := set $s "release" (dict "name" .Release.Name "namespace" .Release.Namespace "service" .Release.Service "chart" .Chart.Name "chartLabel" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_") "version" .Chart.Version) -}}
{{- $_ := set $s "failHere" (hasSuffix "/templates/validate.yaml" .Template.Name) -}}
{{- include "kvgen.resolveName" $s -}}
{{- $v := $s.V -}}
{{- include "kvgen.plan" $s -}}
{{- if $s.errs -}}
{{- "{}" -}}
{{- else -}}
{{- $rt := .Files.Get "files/runtime.yaml" | fromYaml -}}
{{- $_ := set $s "rt" $rt -}}
{{- $_ := set $s "W" $rt.wiring -}}
{{- $_ := set $s "C" (.Files.Get "files/sizing.yaml" | fromYaml) -}}
{{- include "kvgen.images" $s -}}
{{- $_ := set $s "modelCache" (include "kvgen.modelCache" $v | fromJson) -}}
{{- $_ := set $s "modelDir" (include "kvgen.modelDir" $s) -}}
{{- include "kvgen.planDocument" $s -}}
{{- $_ := set . "kvgen.plan (the plan document of this render)" $s.plan -}}
{{/* the layout reads the plan document, the values, the release and the chart's data files, nothing else */}}
{{- $L := dict "V" $v "plan" $s.plan "release" $s.release "namespace" $s.namespace "rt" $rt "W" $rt.wiring "C" $s.C "F" .Files -}}
{{- include "kvgen.layout" $L -}}
{{- $c := $L.context -}}
{{- if $v.extraObjects -}}
{{/* an extra object that is one of kvgen's own: known only now that the objects are laid out */}}
{{- include "kvgen.extraObjectClashes" (list $s $c) -}}
{{- end -}}
{{- if $s.errs -}}
{{- include "kvgen.failOnProblems" $s -}}
{{- "{}" -}}
{{- else -}}
{{- toJson $c -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.layout: the context from the plan document ($s.plan), the values ($s.V), the release ($s.release:
name, service, chartLabel; $s.namespace) and the chart's data files ($s.rt: files/runtime.yaml, $s.W: its
wiring, $s.C: files/sizing.yaml, $s.F: the files): the one source of kvgen's layout. kvgen runs it
translated to Python (tools/gotemplate.py writes kvgen's context layout module). Built in named pieces, each a
define below. Sets $s.context.
Usage: {{- include "kvgen.layout" $L -}}
*/}}
{{- define "kvgen.layout" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $p := $s.plan -}}
{{- $_ := set $s "backend" (default "" $p.backend) -}}
{{- $_ := set $s "gpuAccess" (default dict $p.gpuAccess) -}}
{{- range $piece := list "meta" "vllmArgs" "env" "gpus" "tiers" "lmcache" "vllm" "download" "sidecar" "volumes" "workloads" "operations" "routing" -}}
{{- include (printf "kvgen.context.%s" $piece) $s -}}
{{- end -}}
{{/* every warning, one a line, on the workloads' own metadata (not their pod templates): Argo CD and Flux show it */}}
{{- $commonNotes := default dict $v.commonAnnotations -}}
{{- $annotations := mergeOverwrite (dict) $commonNotes $s.meta.annotations -}}
{{- if $p.warnings -}}{{- $_ := set $annotations $s.W.annotations.warnings (join "\n" $p.warnings) -}}{{- end -}}
{{- $c := dict "name" $v.name "labels" $s.meta.labels "selector" $s.meta.selector "annotations" $annotations -}}
{{- if $s.namespace -}}{{- $_ := set $c "namespace" $s.namespace -}}{{- end -}}
{{- if $commonNotes -}}{{- $_ := set $c "commonAnnotations" $commonNotes -}}{{- end -}}
{{/* the Service of the API (rank 0 serves it): service.labels and service.annotations over the common ones */}}
{{- $svc := $v.service -}}
{{- $service := dict "type" $svc.type "port" (int64 $svc.port) "selector" (index $s.workloads 0).pod.selector "labels" (mergeOverwrite (dict) $s.meta.labels (default dict $svc.labels)) -}}
{{- $ports := list (dict "name" "http" "port" (int64 $svc.port) "targetPort" "http" "protocol" "TCP") -}}
{{- range $p := default list $svc.extraPorts -}}
{{- $target := $p.port -}}{{- if include "kvgen.isSet" (list $p "targetPort") -}}{{- $target = $p.targetPort -}}{{- end -}}
{{- $ports = append $ports (dict "name" $p.name "port" (int64 $p.port) "targetPort" (ternary (toString $target) (int64 $target) (kindIs "string" $target)) "protocol" (default "TCP" $p.protocol)) -}}
{{- end -}}
{{- $_ := set $service "ports" $ports -}}
{{- $svcNotes := mergeOverwrite (dict) $commonNotes (default dict $svc.annotations) -}}
{{- if $svcNotes -}}{{- $_ := set $service "annotations" $svcNotes -}}{{- end -}}
{{- range $k := list "loadBalancerClass" "externalTrafficPolicy" "loadBalancerSourceRanges" -}}
{{- if include "kvgen.isSet" (list $svc $k) -}}{{- $_ := set $service $k (index $svc $k) -}}{{- end -}}
{{- end -}}
{{- $r := default dict $v.routing -}}
{{- if eq (default "none" $r.mode) "sessionAffinity" -}}
{{- $_ := set $service "sessionAffinity" "ClientIP" -}}
{{- $_ := set $service "sessionAffinityConfig" (dict "clientIP" (dict "timeoutSeconds" (include "kvgen.routingValue" (list (default dict $r.sessionAffinity) "timeoutSeconds" 10800) | int64))) -}}
{{- end -}}
{{- $_ := set $c "service" $service -}}
{{/* the LWS controller makes a LeaderWorkerSet's; a single-node StatefulSet (model.cache.claimTemplate) names it too */}}
{{- if or (and (gt (int64 $v.parallelism.nodes) 1) (ne $v.multiNode.engine "leaderworkerset")) (and (eq (int64 $v.parallelism.nodes) 1) $p.weights.claimTemplate) -}}
{{- $_ := set $c "headless" (dict "name" (printf "%s-headless" $v.name) "port" (int64 $s.W.masterPort)) -}}
{{- end -}}
{{- if $s.lmcache -}}{{- $_ := set $c "launcher" $s.lmcache.launcher -}}{{- end -}}
{{- if $s.gpus.claimTemplate -}}{{- $_ := set $c "claimTemplate" $s.gpus.claimTemplate -}}{{- end -}}
{{- $sa := default dict (default dict $v.pod).serviceAccount -}}
{{- if $sa.create -}}{{- $_ := set $c "serviceAccount" (dict "name" (default $v.name $sa.name) "automountToken" (default false $sa.automountToken)) -}}{{- end -}}
{{- $_ := set $c "workloads" $s.workloads -}}
{{- range $k, $o := $s.operations -}}{{- $_ := set $c $k $o -}}{{- end -}}
{{- range $k, $o := $s.routing -}}{{- $_ := set $c $k $o -}}{{- end -}}
{{- $decision := pick $p.decision "enabled" "code" "reason" -}}
{{- $_ := set $c "decision" $decision -}}
{{- if $s.gpuAccess -}}{{- $_ := set $c "gpuAccess" (pick $s.gpuAccess "mode" "summary" "requirement" "deviceClassName") -}}{{- end -}}
{{- if $p.warnings -}}{{- $_ := set $c "warnings" $p.warnings -}}{{- end -}}
{{- if $v.extraObjects -}}{{- $_ := set $c "extraObjects" (deepCopy $v.extraObjects) -}}{{- end -}}
{{- $_ := set $s "context" $c -}}
{{- end -}}

{{/*
kvgen.context.meta: the labels, the selector and the annotations that record the decision.
Sets $s.meta: labels, selector, annotations (keys: wiring.labels, wiring.annotations).
Usage: {{- include "kvgen.context.meta" $s -}}
*/}}
{{- define "kvgen.context.meta" -}}
{{- $s := . -}}
{{- $key := $s.W.labels -}}
{{- $note := $s.W.annotations -}}
{{- $role := $s.V.disaggregation.role -}}
{{/* under Helm: the release is the instance (kvgen: the name), Helm manages it and the chart is named;
     helm.sh/chart stays off the pod template (labels), so a new chart version alone restarts no server */}}
{{- $selector := dict $key.name "vllm" $key.instance $s.release.name -}}
{{/* maps are built in the order kvgen writes their keys (kvgen keeps a map's order, Helm sorts it) */}}
{{- $labels := merge (dict) $selector (dict $key.component (ternary "inference" $role (eq $role "none")) $key.version $s.plan.images.vllmTag $key.partOf $s.V.name $key.managedBy $s.release.service) -}}
{{- $common := default dict $s.V.commonLabels -}}
{{/* commonLabels: on every object and pod template, never in a selector (kvgen's own keys are refused there) */}}
{{- $objectLabels := mergeOverwrite (dict) $common $labels -}}
{{- if $s.release.chartLabel -}}{{- $_ := set $objectLabels $key.chart $s.release.chartLabel -}}{{- end -}}
{{- $annotations := dict $note.offloading (ternary "enabled" "disabled" $s.plan.decision.enabled) -}}
{{- if $s.plan.decision.enabled -}}
{{- $_ := set $annotations $note.backend $s.backend -}}
{{- else -}}
{{- $_ := set $annotations $note.reason $s.plan.decision.code -}}
{{- end -}}
{{- if $s.gpuAccess -}}{{- $_ := set $annotations $note.gpuAccess $s.gpuAccess.mode -}}{{- end -}}
{{- $_ := set $s "meta" (dict "labels" $objectLabels "podLabels" $labels "commonLabels" $common "selector" $selector "annotations" $annotations) -}}
{{- end -}}

{{/*
kvgen.context.vllmArgs: `vllm serve`'s arguments (the image's entrypoint; the model is its
positional argument). Sets $s.vllmArgs: head and tail; ranks 1.. of a multi-node server add
--headless between them.
Usage: {{- include "kvgen.context.vllmArgs" $s -}}
*/}}
{{- define "kvgen.context.vllmArgs" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $p := $v.parallelism -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $head := list $v.model.id (printf "--port=%d" (int64 $v.service.port)) (printf "--tensor-parallel-size=%d" (int64 $p.tensor)) -}}
{{/* model.uri: vLLM serves the mounted directory, under the model's id */}}
{{- if $s.plan.weights.local -}}
{{- $named := false -}}
{{- range $a := default list $v.vllm.extraArgs -}}{{- if regexMatch "^--served[-_]model[-_]name(=|$)" $a -}}{{- $named = true -}}{{- end -}}{{- end -}}
{{- $head = concat (list $s.plan.weights.dir) (ternary list (list (printf "--served-model-name=%s" $v.model.id)) $named) (rest $head) -}}
{{- end -}}
{{- if gt (int64 $p.pipeline) 1 -}}{{- $head = append $head (printf "--pipeline-parallel-size=%d" (int64 $p.pipeline)) -}}{{- end -}}
{{- if gt (int64 $p.data) 1 -}}{{- $head = append $head (printf "--data-parallel-size=%d" (int64 $p.data)) -}}{{- end -}}
{{- if and (gt (int64 $p.nodes) 1) (eq $v.multiNode.engine "leaderworkerset") -}}
{{/* the LWS controller gives every container the group's leader and the pod's index */}}
{{- $head = concat $head (list (printf "--nnodes=%d" (int64 $p.nodes)) (printf "--node-rank=$(%s)" $s.W.lws.workerIndexEnv) (printf "--master-addr=$(%s)" $s.W.lws.leaderAddressEnv) (printf "--master-port=%d" (int64 $s.W.masterPort))) -}}
{{- else if gt (int64 $p.nodes) 1 -}}
{{- $head = concat $head (list (printf "--nnodes=%d" (int64 $p.nodes)) "--node-rank=$(NODE_RANK)" (printf "--master-addr=%s-0.%s-headless" $v.name $v.name) (printf "--master-port=%d" (int64 $s.W.masterPort))) -}}
{{- end -}}
{{- $tail := list -}}
{{/* the spec's model.maxModelLen, or the longest length that fits (kvgen.contextLength) */}}
{{- with $s.plan.contextLength.flag -}}{{- $tail = append $tail (printf "--max-model-len=%d" (int64 .)) -}}{{- end -}}
{{- if gt (int64 $s.plan.instance.gpus) 0 -}}{{- $tail = append $tail (printf "--gpu-memory-utilization=%s" (include "kvgen.number" $v.vllm.gpuMemoryUtilization)) -}}{{- end -}}
{{- $kv := dict -}}
{{- if eq $s.backend "lmcache" -}}
{{- $extra := dict "lmcache.mp.host" (printf "tcp://%s" $s.W.lmcache.host) "lmcache.mp.port" $s.W.lmcache.port -}}
{{/* a server spanning several nodes: one LMCache server per node, every node's pod named in node-rank
     order */}}
{{- if gt (int64 $p.nodes) 1 -}}
{{- $urls := list -}}
{{- range $rank := until (int $p.nodes) -}}
{{- $host := "" -}}
{{- if eq $v.multiNode.engine "leaderworkerset" -}}
{{- $host = printf "%s-$(%s)" $v.name $s.W.lws.groupIndexEnv -}}
{{- if gt $rank 0 -}}{{- $host = printf "%s-%d" $host $rank -}}{{- end -}}
{{- $host = printf "%s.%s" $host $v.name -}}
{{- else if eq $rank 0 -}}
{{- $host = printf "%s-0.%s-headless" $v.name $v.name -}}
{{- else -}}
{{- $host = printf "%s-worker-%d.%s-headless" $v.name $rank $v.name -}}
{{- end -}}
{{- $urls = append $urls (printf "tcp://%s:%d" $host (int64 $s.W.lmcache.port)) -}}
{{- end -}}
{{- $extra = dict "lmcache.mp.server_urls" $urls -}}
{{- end -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.lmcache "kv_role" "kv_both" "kv_connector_extra_config" $extra -}}
{{- else if eq $s.backend "native" -}}
{{- $count := len $o.secondary -}}
{{- $specName := ternary "TieringOffloadingSpec" "CPUOffloadingSpec" (gt $count 0) -}}
{{- if include "kvgen.isSet" (list $o "specName") -}}{{- $specName = $o.specName -}}{{- end -}}
{{- $extra := dict "cpu_bytes_to_use" (int64 $s.plan.sizes.cpuTier) "eviction_policy" $o.evictionPolicy "spec_name" $specName -}}
{{- if gt $count 0 -}}
{{- $tiers := list -}}
{{- range $n := until $count -}}{{- $tiers = append $tiers (dict "type" "fs" "root_dir" (printf "%s%d" $s.W.tierMountPrefix $n)) -}}{{- end -}}
{{- $_ := set $extra "secondary_tiers" $tiers -}}
{{- end -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.native "kv_role" "kv_both" "kv_connector_extra_config" $extra -}}
{{/* prefill/decode: NIXL hands the KV over, the OffloadingConnector keeps its tiers */}}
{{- if ne $v.disaggregation.role "none" -}}
{{- $nixl := dict "kv_connector" $s.rt.connectors.disaggregation "kv_role" "kv_both" -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.multi "kv_role" "kv_both" "kv_load_failure_policy" $s.rt.kvLoadFailurePolicy "kv_connector_extra_config" (dict "connectors" (list $nixl $kv)) -}}
{{- end -}}
{{- else if ne $v.disaggregation.role "none" -}}
{{- $kv = dict "kv_connector" $s.rt.connectors.disaggregation "kv_role" "kv_both" "kv_load_failure_policy" $s.rt.kvLoadFailurePolicy -}}
{{- end -}}
{{- if $kv -}}{{- $tail = append $tail (printf "--kv-transfer-config=%s" (toJson $kv)) -}}{{- end -}}
{{- if and (eq $s.backend "native") $s.plan.model.hybrid -}}{{- $tail = append $tail "--enable-prefix-caching" -}}{{- end -}}
{{/* vllm.extraArgs as vLLM gets them (model.cache: without --revision, which the download takes) */}}
{{- $tail = concat $tail $s.plan.weights.extraArgs -}}
{{- $_ := set $s "vllmArgs" (dict "head" $head "tail" $tail) -}}
{{- end -}}

{{/*
kvgen.context.env: the vLLM container's environment: kvgen's variables, then the values'.
Sets $s.env (a list, maybe empty).
Usage: {{- include "kvgen.context.env" $s -}}
*/}}
{{- define "kvgen.context.env" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $env := list -}}
{{- if and (gt (int64 $v.parallelism.nodes) 1) (ne $v.multiNode.engine "leaderworkerset") -}}{{- $env = append $env (dict "name" "NODE_RANK" "valueFrom" (dict "fieldRef" (dict "fieldPath" (printf "metadata.labels['%s']" $s.W.labels.podIndex)))) -}}{{- end -}}
{{/* the group's index names its pods in lmcache.mp.server_urls (kvgen.context.vllmArgs) */}}
{{- if and (gt (int64 $v.parallelism.nodes) 1) (eq $v.multiNode.engine "leaderworkerset") (eq $s.backend "lmcache") -}}{{- $env = append $env (dict "name" $s.W.lws.groupIndexEnv "valueFrom" (dict "fieldRef" (dict "fieldPath" (printf "metadata.labels['%s']" $s.W.lws.groupIndexLabel)))) -}}{{- end -}}
{{- with $v.model.hfTokenSecret -}}
{{- $ref := dict "name" .name "key" .key -}}
{{- if include "kvgen.isSet" (list . "optional") -}}{{- $_ := set $ref "optional" .optional -}}{{- end -}}
{{- $env = append $env (dict "name" "HF_TOKEN" "valueFrom" (dict "secretKeyRef" $ref)) -}}
{{- end -}}
{{- with $v.service.apiKeySecret -}}{{- $env = append $env (dict "name" "VLLM_API_KEY" "valueFrom" (dict "secretKeyRef" (dict "name" .name "key" .key))) -}}{{- end -}}
{{- if ne $v.disaggregation.role "none" -}}{{- $env = append $env (dict "name" "VLLM_NIXL_SIDE_CHANNEL_HOST" "valueFrom" (dict "fieldRef" (dict "fieldPath" "status.podIP"))) -}}{{- end -}}
{{/* the weights are on the claim: never ask the Hub (air-gapped clusters) */}}
{{- if $s.plan.weights.local -}}{{- $env = append $env (dict "name" "HF_HUB_OFFLINE" "value" "1") -}}{{- end -}}
{{- if eq (int64 $s.plan.instance.gpus) 0 -}}{{- $env = append $env (dict "name" "VLLM_CPU_KVCACHE_SPACE" "value" (toString (int64 $s.C.vllm.cpuBackendKvSpaceGiB))) -}}{{- end -}}
{{/* dra: only the claimed GPUs (the plan's gpuAccess.env) */}}
{{- $env = concat $env (default list $s.gpuAccess.env) -}}
{{- range $e := default list $v.vllm.env -}}{{- $env = append $env $e -}}{{- end -}}
{{- $_ := set $s "env" $env -}}
{{- end -}}

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
{{- $ports := list (dict "name" "http" "containerPort" (int64 $s.V.service.port) "protocol" "TCP") -}}
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
and vllm.env. Sets $s.download; leaves it out otherwise.
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
kvgen.context.volumes: the pod's volumes: /dev/shm, the model cache, the launcher, the disk tiers.
Sets $s.volumes.
Usage: {{- include "kvgen.context.volumes" $s -}} (after tiers, lmcache)
*/}}
{{- define "kvgen.context.volumes" -}}
{{- $s := . -}}
{{- $volumes := list (dict "name" "dshm" "emptyDir" (dict "medium" "Memory" "sizeLimit" (include "kvgen.formatBytes" $s.plan.sizes.shm))) (dict "name" "model-cache" "emptyDir" (dict "sizeLimit" (include "kvgen.formatBytes" $s.plan.sizes.modelCache))) -}}
{{/* the weights' claim (a claim template's volume is the StatefulSet's volumeClaimTemplates) */}}
{{- with $s.plan.weights.volume -}}{{- $volumes = append $volumes (deepCopy .) -}}{{- end -}}
{{- if $s.lmcache -}}
{{- $volumes = append $volumes (dict "name" $s.W.launcher.volume "configMap" (dict "name" $s.lmcache.launcher.name "defaultMode" (int64 $s.W.launcher.mode))) -}}
{{- end -}}
{{- range $t := $s.tiers -}}{{- $volumes = append $volumes $t.volume -}}{{- end -}}
{{- $volumes = concat $volumes (default list (default dict $s.V.pod).volumes) -}}
{{- $_ := set $s "volumes" $volumes -}}
{{- end -}}

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
{{- if $s.sidecar -}}{{- $_ := set $base "sidecar" $s.sidecar -}}{{- end -}}
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
kvgen.context.operations: the operations objects, each left out when off: disruptionBudget (a
PodDisruptionBudget), podMonitor and serviceMonitor (Prometheus Operator), scaledObject (KEDA)
or hpa (a HorizontalPodAutoscaler). Sets $s.operations (a map of those keys).
Usage: {{- include "kvgen.context.operations" $s -}} (after workloads)
*/}}
{{- define "kvgen.context.operations" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $out := dict -}}
{{- $a := $v.autoscaling -}}
{{- $budget := $v.disruptionBudget -}}
{{- $most := int64 $v.replicas -}}
{{- if $a -}}{{- $most = int64 $a.maxReplicas -}}{{- end -}}
{{- $on := gt $most 1 -}}
{{- if not (kindIs "invalid" $budget.enabled) -}}{{- $on = $budget.enabled -}}{{- end -}}
{{- if $on -}}
{{- $max := $budget.maxUnavailable -}}
{{- if not (kindIs "string" $max) -}}{{- $max = int64 $max -}}{{- end -}}
{{- $_ := set $out "disruptionBudget" (dict "name" $v.name "selector" $s.meta.selector "maxUnavailable" $max) -}}
{{- end -}}
{{- $m := $v.metrics -}}
{{- $labels := mergeOverwrite (deepCopy $s.meta.labels) (default dict $m.labels) -}}
{{- $vllmEndpoint := dict "port" "http" "path" $s.W.vllmMetricsPath "interval" $m.interval -}}
{{- if $m.podMonitor -}}
{{- $endpoints := list $vllmEndpoint -}}
{{- if and $s.lmcache $s.lmcacheScraped -}}
{{- $endpoints = append $endpoints (dict "port" $s.W.lmcache.httpPortName "path" $s.W.lmcache.metricsPath "interval" $m.interval) -}}
{{- end -}}
{{/* the pods serving the API: rank 0 of a multi-node server (ranks 1.. serve no /metrics) */}}
{{- $_ := set $out "podMonitor" (dict "name" $v.name "labels" $labels "selector" (index $s.workloads 0).pod.selector "endpoints" $endpoints) -}}
{{- end -}}
{{- if $m.serviceMonitor -}}
{{- $_ := set $out "serviceMonitor" (dict "name" $v.name "labels" $labels "selector" $s.meta.selector "endpoints" (list $vllmEndpoint)) -}}
{{- end -}}
{{- if $a -}}
{{- $min := 1 -}}
{{- if not (kindIs "invalid" $a.minReplicas) -}}{{- $min = $a.minReplicas -}}{{- end -}}
{{- $scale := dict "name" $v.name "target" $v.name "minReplicas" (int64 $min) "maxReplicas" (int64 $a.maxReplicas) -}}
{{- if $a.keda -}}
{{- $k := $a.keda -}}
{{- if not (kindIs "invalid" $k.pollingInterval) -}}{{- $_ := set $scale "pollingInterval" (int64 $k.pollingInterval) -}}{{- end -}}
{{- if not (kindIs "invalid" $k.cooldownPeriod) -}}{{- $_ := set $scale "cooldownPeriod" (int64 $k.cooldownPeriod) -}}{{- end -}}
{{- $_ := set $scale "serverAddress" $k.serverAddress -}}
{{/* the spec's namespace only: without one, no namespace matcher */}}
{{- $where := "" -}}
{{- if $v.namespace -}}{{- $where = printf "namespace=%q," $v.namespace -}}{{- end -}}
{{- $query := printf "sum(vllm:num_requests_waiting{%spod=~%q})" $where (printf "%s-[a-z0-9]+-[a-z0-9]+" $v.name) -}}
{{- if not (kindIs "invalid" $k.query) -}}{{- $query = $k.query -}}{{- end -}}
{{- $_ := set $scale "query" $query -}}
{{- $_ := set $scale "threshold" (default "5" $k.threshold) -}}
{{- $_ := set $out "scaledObject" $scale -}}
{{- else if $a.hpa -}}
{{- $_ := set $scale "metrics" $a.hpa.metrics -}}
{{- $_ := set $out "hpa" $scale -}}
{{- end -}}
{{- end -}}
{{- $_ := set $s "operations" $out -}}
{{- end -}}

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

