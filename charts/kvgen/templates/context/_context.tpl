{{/*
kvgen.context: every value the object templates lay out, as JSON (kvgen's Context type). Keys are
camelCase; an absent value is a key left out. It plans (kvgen.plan) and writes the plan document
(kvgen.planDocument), then lays the objects out (kvgen.layout, below: written once, in this folder; kvgen runs
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
{{- $s := dict "V" (deepCopy .Values) "F" .Files "errs" list "kube" $kube "namespace" (default .Release.Namespace .Values.namespace) -}}
{{/* the spec's kubeVersion is one kvgen has Kubernetes schemas for (files/kubernetes.json supported) */}}
{{- $K := .Files.Get "files/kubernetes.json" | fromJson -}}
{{- $written := regexFind "^[0-9]+\\.[0-9]+" (toString (default "" .Values.kubeVersion)) -}}
{{- $unsupported := false -}}
{{- if and $written (not (has $written $K.supported)) -}}
{{- $unsupported = true -}}
{{- if not $given -}}{{- $kube = printf "v%s.0" $K.defaultVersion -}}{{- end -}}
{{- if semverCompare (printf "<%s.0-0" (first $K.supported)) (printf "%s.0" $written) -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "Kubernetes %s is too old: kvgen's native sidecars need %s or newer" $written (first $K.supported)) "use a version kvgen has Kubernetes schemas for") -}}
{{- else -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "no schemas for Kubernetes %s; supported: %s" $written (join ", " $K.supported)) "use a version kvgen has Kubernetes schemas for") -}}
{{- end -}}
{{- end -}}
{{- if and $given .Values.kubeVersion (not $unsupported) (semverCompare (printf "<%s.0-0" .Values.kubeVersion) $kube) -}}
{{- include "kvgen.problem" (list $s "kubeVersion" (printf "the spec is written for Kubernetes %s, but the output is for Kubernetes %s, which is older" .Values.kubeVersion (regexFind "[0-9]+\\.[0-9]+" $kube)) (printf "render for %s or newer (kvgen --kube-version, helm template --kube-version; helm install uses the cluster's), or set kubeVersion to the version the cluster runs" .Values.kubeVersion)) -}}
{{- end -}}
{{- $_ := set $s "kubeProblems" (len $s.errs) -}}{{/* planning goes on past them (kvgen.plan) */}}
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
define of this folder (_meta, _args, _containers, _volumes, _workloads, _operations, _routing). Sets $s.context.
Usage: {{- include "kvgen.layout" $L -}}
*/}}
{{- define "kvgen.layout" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $p := $s.plan -}}
{{- $_ := set $s "backend" (default "" $p.backend) -}}
{{- $_ := set $s "gpuAccess" (default dict $p.gpuAccess) -}}
{{- range $piece := list "meta" "vllmArgs" "env" "gpus" "tiers" "lmcache" "vllm" "download" "sidecar" "routingSidecar" "volumes" "workloads" "operations" "routing" -}}
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
{{/* routing.naming kserve: KServe's workload Service name (kserve aaac4e29 workload.go:178-180) */}}
{{- $svcName := $v.name -}}
{{- if eq (default "kvgen" (default dict $v.routing).naming) "kserve" -}}{{- $svcName = printf "%s-kserve-workload-svc" $v.name -}}{{- end -}}
{{- $service := dict "name" $svcName "type" $svc.type "port" (int64 $svc.port) "selector" (index $s.workloads 0).pod.selector "labels" (mergeOverwrite (dict) $s.meta.labels (default dict $svc.labels)) -}}
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
