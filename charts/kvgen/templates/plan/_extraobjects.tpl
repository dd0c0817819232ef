{{/*
extraObjects: the values' own Kubernetes objects, rendered verbatim after kvgen's
(templates/extraobjects.yaml). The chart's twin of kvgen/plan/extra_objects.py, in its words, but
for the strict schema check of a kind kvgen has a schema for: Go templates cannot validate a
Kubernetes schema, so the chart leaves that to the API server (helm install, kubectl apply).
*/}}

{{/* kvgen.extraNamespace: the namespace the server is installed into, as the extra objects' check
compares it (kvgen: the spec's, else --namespace): the values' namespace, else the release
namespace unless it is "default", which Helm cannot tell from no -n (kvgen.checkRelease). */}}
{{- define "kvgen.extraNamespace" -}}
{{- $s := . -}}
{{- if kindIs "string" $s.V.namespace -}}{{- $s.V.namespace -}}
{{- else if ne $s.release.namespace "default" -}}{{- $s.release.namespace -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraWellFormed: "true" when an item has apiVersion, kind and metadata.name, non-empty strings */}}
{{- define "kvgen.extraWellFormed" -}}
{{- $o := . -}}
{{- if kindIs "map" $o -}}
{{- $meta := index $o "metadata" -}}
{{- if and (kindIs "string" (index $o "apiVersion")) (index $o "apiVersion") (kindIs "string" (index $o "kind")) (index $o "kind") (kindIs "map" $meta) -}}
{{- if and (kindIs "string" (index $meta "name")) (index $meta "name") -}}true{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.apiGroup: the API group of an apiVersion (networking.k8s.io/v1 -> networking.k8s.io, v1 -> "") */}}
{{- define "kvgen.apiGroup" -}}
{{- regexReplaceAll "/?[^/]*$" (toString .) "" -}}
{{- end -}}

{{/* kvgen.hasSchema: "true" when kvgen validates an object of this apiVersion and kind for the
Kubernetes version of the render (files/kube-kinds.json; kvgen/data/kube.py has_schema).
Usage: include "kvgen.hasSchema" (list $s apiVersion kind) */}}
{{- define "kvgen.hasSchema" -}}
{{- $s := index . 0 -}}
{{- if not (hasKey $s "kubeKinds") -}}{{- $_ := set $s "kubeKinds" ($s.F.Get "files/kube-kinds.json" | fromJson).kinds -}}{{- end -}}
{{- $key := printf "%s %s" (index . 1) (index . 2) -}}
{{- if hasKey $s.kubeKinds $key -}}
{{- $span := index $s.kubeKinds $key -}}
{{- $minor := int64 (index (splitList "." (regexFind "[0-9]+\\.[0-9]+" $s.kube)) 1) -}}
{{- $first := index $span 0 -}}{{- $last := index $span 1 -}}
{{- $fromOk := or (kindIs "invalid" $first) (ge $minor (int64 (index (splitList "." (toString $first)) 1))) -}}
{{- $toOk := or (kindIs "invalid" $last) (le $minor (int64 (index (splitList "." (toString $last)) 1))) -}}
{{- if and $fromOk $toOk -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraSecretValues: a Secret's data or stringData, however its kind is written ("secret", "Secret ")
and inside a List's items (kvgen/plan/extra_objects.py check). Usage: (list $s PATH OBJECT) */}}
{{- define "kvgen.extraSecretValues" -}}
{{- $s := index . 0 -}}{{- $path := index . 1 -}}{{- $o := index . 2 -}}
{{- if kindIs "map" $o -}}
{{- $kind := "" -}}{{- if kindIs "string" (index $o "kind") -}}{{- $kind = lower (trim (index $o "kind")) -}}{{- end -}}
{{- if eq $kind "secret" -}}
{{- range $key := list "data" "stringData" -}}
{{- if hasKey $o $key -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $path $key) "a Secret's values would be written into kvgen's output (a file, a Git repository, a Helm release): kvgen never writes secret values" "create the Secret outside kvgen (kubectl, External Secrets, Sealed Secrets) and reference it") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (hasSuffix "list" $kind) (kindIs "slice" (index $o "items")) -}}
{{- range $j, $item := index $o "items" -}}{{- include "kvgen.extraSecretValues" (list $s (printf "%s.items[%d]" $path $j) $item) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkExtraObjects: every problem of extraObjects that needs no rendering (kvgen/plan/extra_objects.py check) */}}
{{- define "kvgen.checkExtraObjects" -}}
{{- $s := . -}}
{{- $ns := include "kvgen.extraNamespace" $s -}}
{{- $seen := dict -}}
{{- $required := dict "apiVersion" "required: the object's API group and version, a string such as networking.k8s.io/v1" "kind" "required: the object's kind, a string such as NetworkPolicy" "name" "required: the object's name, a string" -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- $base := printf "extraObjects[%d]" $i -}}
{{- if kindIs "map" $o -}}
{{- range $key := list "apiVersion" "kind" -}}
{{- if not (and (kindIs "string" (index $o $key)) (index $o $key)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $base $key) (index $required $key) "") -}}
{{- end -}}
{{- end -}}
{{- $meta := index $o "metadata" -}}
{{- if not (and (kindIs "map" $meta) (kindIs "string" (index (default dict $meta) "name")) (index (default dict $meta) "name")) -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.name" $base) $required.name "") -}}
{{- end -}}
{{- include "kvgen.extraSecretValues" (list $s $base $o) -}}
{{- if include "kvgen.extraWellFormed" $o -}}
{{- $mns := index $meta "namespace" -}}
{{- if and (kindIs "string" $mns) $ns (ne $mns $ns) -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.namespace" $base) (printf "%s differs from the namespace the server is installed into, %s (the spec's namespace, helm -n, kvgen --namespace)" (include "kvgen.quoted" $mns) (include "kvgen.quoted" $ns)) (printf "leave metadata.namespace out (the object then goes where the server goes), or install the server into %s" $mns)) -}}
{{- end -}}
{{- $where := ternary $mns $ns (kindIs "string" $mns) -}}
{{- $key := printf "%s\x00%s\x00%s\x00%s" (include "kvgen.apiGroup" $o.apiVersion) $o.kind $where $meta.name -}}
{{- if hasKey $seen $key -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.name" $base) (printf "%s %s is also extraObjects[%d]: the same object twice" $o.kind (include "kvgen.quoted" $meta.name) (index $seen $key)) "remove one of them, or rename it") -}}
{{- else -}}
{{- $_ := set $seen $key $i -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraObjectWarnings: an object of a kind kvgen has no schema for (kvgen/plan/extra_objects.py warnings). Returns a JSON list. */}}
{{- define "kvgen.extraObjectWarnings" -}}
{{- $s := . -}}
{{- $out := list -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- if and (include "kvgen.extraWellFormed" $o) (not (include "kvgen.hasSchema" (list $s $o.apiVersion $o.kind))) -}}
{{- $out = append $out (printf "extraObjects[%d]: %s %s is not validated: kvgen has no schema for it" $i $o.apiVersion $o.kind) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.ownObjects: kvgen's own objects of a context, as the object templates render them: a
JSON list of {apiVersion, kind, name} (kvgen compares the rendered objects themselves). */}}
{{- define "kvgen.ownObjects" -}}
{{- $c := . -}}
{{- $out := list -}}
{{- if $c.serviceAccount -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "ServiceAccount" "name" $c.serviceAccount.name) -}}{{- end -}}
{{- if $c.launcher -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "ConfigMap" "name" $c.launcher.name) -}}{{- end -}}
{{- if $c.claimTemplate -}}{{- $out = append $out (dict "apiVersion" "resource.k8s.io/v1" "kind" "ResourceClaimTemplate" "name" $c.claimTemplate.name) -}}{{- end -}}
{{- if $c.service -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "Service" "name" $c.name) -}}{{- end -}}
{{- if $c.headless -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "Service" "name" $c.headless.name) -}}{{- end -}}
{{- $workloadApis := dict "Deployment" "apps/v1" "StatefulSet" "apps/v1" "LeaderWorkerSet" "leaderworkerset.x-k8s.io/v1" -}}
{{- range $kind := list "Deployment" "StatefulSet" "LeaderWorkerSet" -}}
{{- range $w := $c.workloads -}}
{{- if eq $w.kind $kind -}}{{- $out = append $out (dict "apiVersion" (index $workloadApis $kind) "kind" $kind "name" $w.name) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if $c.disruptionBudget -}}{{- $out = append $out (dict "apiVersion" "policy/v1" "kind" "PodDisruptionBudget" "name" $c.disruptionBudget.name) -}}{{- end -}}
{{- if $c.podMonitor -}}{{- $out = append $out (dict "apiVersion" "monitoring.coreos.com/v1" "kind" "PodMonitor" "name" $c.podMonitor.name) -}}{{- end -}}
{{- if $c.serviceMonitor -}}{{- $out = append $out (dict "apiVersion" "monitoring.coreos.com/v1" "kind" "ServiceMonitor" "name" $c.serviceMonitor.name) -}}{{- end -}}
{{- if $c.scaledObject -}}{{- $out = append $out (dict "apiVersion" "keda.sh/v1alpha1" "kind" "ScaledObject" "name" $c.scaledObject.name) -}}{{- end -}}
{{- if $c.hpa -}}{{- $out = append $out (dict "apiVersion" "autoscaling/v2" "kind" "HorizontalPodAutoscaler" "name" $c.hpa.name) -}}{{- end -}}
{{- if $c.routing -}}
{{- $p := $c.routing.picker.name -}}
{{- range $kind := list "ServiceAccount" "ConfigMap" "Service" -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" $kind "name" $p) -}}{{- end -}}
{{- range $kind := list "Role" "RoleBinding" -}}{{- $out = append $out (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" $kind "name" $p) -}}{{- end -}}
{{- $out = append $out (dict "apiVersion" "apps/v1" "kind" "Deployment" "name" $p) -}}
{{- $out = append $out (dict "apiVersion" "inference.networking.k8s.io/v1" "kind" "InferencePool" "name" $c.routing.pool.name) -}}
{{- $out = append $out (dict "apiVersion" "gateway.networking.k8s.io/v1" "kind" "HTTPRoute" "name" $c.routing.route.name) -}}
{{- with $c.routing.destinationRule -}}{{- $out = append $out (dict "apiVersion" "networking.istio.io/v1" "kind" "DestinationRule" "name" .name) -}}{{- end -}}
{{- if $c.routing.gke -}}
{{- range $kind := list "HealthCheckPolicy" "GCPBackendPolicy" -}}{{- $out = append $out (dict "apiVersion" "networking.gke.io/v1" "kind" $kind "name" $c.routing.pool.name) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.extraObjectClashes: extraObjects that are one of kvgen's own objects (kvgen/plan/extra_objects.py clashes).
Usage: include "kvgen.extraObjectClashes" (list $s $c) */}}
{{- define "kvgen.extraObjectClashes" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}
{{- $own := dict -}}
{{- range $o := include "kvgen.ownObjects" $c | fromJsonArray -}}
{{- $_ := set $own (printf "%s\x00%s\x00%s" (include "kvgen.apiGroup" $o.apiVersion) $o.kind $o.name) $o -}}
{{- end -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- $key := printf "%s\x00%s\x00%s" (include "kvgen.apiGroup" $o.apiVersion) $o.kind $o.metadata.name -}}
{{- if hasKey $own $key -}}
{{- $mine := index $own $key -}}
{{- include "kvgen.problem" (list $s (printf "extraObjects[%d].metadata.name" $i) (printf "%s %s is kvgen's own %s %s %s: one of them would replace the other" $o.kind (include "kvgen.quoted" $o.metadata.name) $mine.apiVersion $mine.kind (include "kvgen.quoted" $mine.name)) "rename it, or set what you need through the spec's own fields (see `kvgen schema`)") -}}
{{- end -}}
{{- end -}}
{{- end -}}
