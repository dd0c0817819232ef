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

{{/* kvgen.extraIsList: "true" when an item is a kind whose items are objects of their own
(files/apiserver.yaml extraObjects.lists: kubectl and Helm create each item, and no object for the
List; kvgen/plan/extra_objects.py is_list). Usage: include "kvgen.extraIsList" (list $s OBJECT) */}}
{{- define "kvgen.extraIsList" -}}
{{- $s := index . 0 -}}{{- $o := index . 1 -}}
{{- if not (hasKey $s "extraLists") -}}{{- $_ := set $s "extraLists" ($s.F.Get "files/apiserver.yaml" | fromYaml).extraObjects.lists -}}{{- end -}}
{{- if and (kindIs "map" $o) (kindIs "string" (index $o "apiVersion")) (kindIs "string" (index $o "kind")) -}}
{{- if has (printf "%s %s" $o.apiVersion $o.kind) $s.extraLists -}}true{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraCreated: every object kubectl and Helm create from extraObjects, as a JSON list of
index chains: [i] the item extraObjects[i], [i, j, ...] the items of a List in its place,
recursively; a List itself comes before its items (kvgen/plan/extra_objects.py created). A
caller walks a chain to its object and path (kvgen.checkExtraObjects shows how). */}}
{{- define "kvgen.extraCreated" -}}
{{- $s := . -}}
{{- $out := list -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- $out = concat $out (include "kvgen.extraCreatedIn" (list $s (list $i) $o) | fromJsonArray) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.extraCreatedIn: kvgen.extraCreated below one item. Usage: (list $s CHAIN OBJECT) */}}
{{- define "kvgen.extraCreatedIn" -}}
{{- $s := index . 0 -}}{{- $at := index . 1 -}}{{- $o := index . 2 -}}
{{- $out := list $at -}}
{{- if and (include "kvgen.extraIsList" (list $s $o)) (kindIs "slice" (index $o "items")) -}}
{{- range $j, $item := index $o "items" -}}
{{- $out = concat $out (include "kvgen.extraCreatedIn" (list $s (append $at $j) $item) | fromJsonArray) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.checkExtraObjects: every problem of extraObjects that needs no rendering, on each object
they create (a List's items each; kvgen/plan/extra_objects.py check) */}}
{{- define "kvgen.checkExtraObjects" -}}
{{- $s := . -}}
{{- $ns := include "kvgen.extraNamespace" $s -}}
{{- $seen := dict -}}
{{- $A := dict -}}
{{- $required := dict "apiVersion" "required: the object's API group and version, a string such as networking.k8s.io/v1" "kind" "required: the object's kind, a string such as NetworkPolicy" "name" "required: the object's name, a string" "object" "an object kubectl and Helm create: a mapping with apiVersion, kind and metadata.name" "items" "a List's items: a list of objects, each with apiVersion, kind and metadata.name" -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- include "kvgen.extraSecretValues" (list $s (printf "extraObjects[%d]" $i) $o) -}}
{{- end -}}
{{- range $at := include "kvgen.extraCreated" $s | fromJsonArray -}}
{{/* the chain's object and path */}}
{{- $o := index $s.V.extraObjects (int (first $at)) -}}{{- $base := printf "extraObjects[%d]" (int (first $at)) -}}
{{- range $j := rest $at -}}{{- $o = index $o.items (int $j) -}}{{- $base = printf "%s.items[%d]" $base (int $j) -}}{{- end -}}
{{- if not (kindIs "map" $o) -}}
{{- include "kvgen.problem" (list $s $base $required.object "") -}}
{{- else if include "kvgen.extraIsList" (list $s $o) -}}
{{- if and (hasKey $o "items") (not (kindIs "slice" (index $o "items"))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.items" $base) $required.items "") -}}
{{- end -}}
{{- else -}}
{{- range $key := list "apiVersion" "kind" -}}
{{- if not (and (kindIs "string" (index $o $key)) (index $o $key)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $base $key) (index $required $key) "") -}}
{{- end -}}
{{- end -}}
{{- $meta := index $o "metadata" -}}
{{- if not (and (kindIs "map" $meta) (kindIs "string" (index (default dict $meta) "name")) (index (default dict $meta) "name")) -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.name" $base) $required.name "") -}}
{{- end -}}
{{- if include "kvgen.extraWellFormed" $o -}}
{{- $mns := index $meta "namespace" -}}
{{- if and (kindIs "string" $mns) $ns (ne $mns $ns) -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.namespace" $base) (printf "%s differs from the namespace the server is installed into, %s (the spec's namespace, helm -n, kvgen --namespace)" (include "kvgen.quoted" $mns) (include "kvgen.quoted" $ns)) (printf "leave metadata.namespace out (the object then goes where the server goes), or install the server into %s" $mns)) -}}
{{- end -}}
{{- $where := ternary $mns $ns (kindIs "string" $mns) -}}
{{- $key := printf "%s\x00%s\x00%s\x00%s" (include "kvgen.apiGroup" $o.apiVersion) $o.kind $where $meta.name -}}
{{- if hasKey $seen $key -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.name" $base) (printf "%s %s is also %s: the same object twice" $o.kind (include "kvgen.quoted" $meta.name) (index $seen $key)) "remove one of them, or rename it") -}}
{{- else -}}
{{- $_ := set $seen $key $base -}}
{{- end -}}
{{- if not $A -}}{{- $A = $s.F.Get "files/apiserver.yaml" | fromYaml -}}{{- end -}}
{{- include "kvgen.extraObjectApi" (list $s $A $base $o) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraObjectApi: what the API server would refuse in an object extraObjects create
(kvgen.extraCreated) at PATH: its metadata (any kind) and the pod spec a built-in kind holds
(kvgen/plan/extra_objects.py api_problems; the tables are files/apiserver.yaml extraObjects).
Usage: include "kvgen.extraObjectApi" (list $s $A PATH OBJECT) */}}
{{- define "kvgen.extraObjectApi" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $path := index . 2 -}}{{- $o := index . 3 -}}
{{- $E := $A.extraObjects -}}
{{- $grp := default "core" (include "kvgen.apiGroup" $o.apiVersion) -}}
{{/* every kind: the API server validates a custom resource's metadata too (ValidateObjectMetaAccessor, NameIsDNSSubdomain) */}}
{{- $meta := index $o "metadata" -}}
{{- if kindIs "map" $meta -}}
{{- $mp := printf "%s.metadata" $path -}}
{{/* ValidateObjectMeta: the name by the kind's name function */}}
{{- $row := $E.names.default -}}
{{- $kinds := index $E.names.kinds $grp -}}
{{- if and (kindIs "map" $kinds) (kindIs "map" (index $kinds $o.kind)) -}}{{- $row = index $kinds $o.kind -}}{{- end -}}
{{- $name := index $meta "name" -}}
{{- if and (kindIs "string" $name) $name (index $row "format") (not (include "kvgen.apiFits" (list $A (index $row "format") $name))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $mp) (printf "%s is not %s (ValidateObjectMeta: %s)" (include "kvgen.quoted" $name) (index $A.formats (index $row "format")).what (index $row "function")) "") -}}
{{- end -}}
{{- include "kvgen.extraLabelsAndAnnotations" (list $s $A $mp $meta "ValidateObjectMeta") -}}
{{- end -}}
{{/* the pod spec the kind holds */}}
{{- $where := index (default dict (index $E.podSpecs $grp)) $o.kind -}}
{{- if kindIs "string" $where -}}
{{- $pod := $o -}}{{- $parent := dict -}}
{{- range $k := splitList "." $where -}}{{- $parent = $pod -}}{{- if kindIs "map" $pod -}}{{- $pod = index $pod $k -}}{{- else -}}{{- $pod = "" -}}{{- end -}}{{- end -}}
{{- if kindIs "map" $pod -}}{{- include "kvgen.extraPodSpec" (list $s $A (printf "%s.%s" $path $where) $pod) -}}{{- end -}}
{{/* a pod template's own metadata (ValidatePodTemplateSpec: its labels and annotations; no name) */}}
{{- if and (hasSuffix "template.spec" $where) (kindIs "map" $parent) (kindIs "map" (index $parent "metadata")) -}}
{{- include "kvgen.extraLabelsAndAnnotations" (list $s $A (printf "%s.%s.metadata" $path (trimSuffix ".spec" $where)) (index $parent "metadata") "ValidatePodTemplateSpec") -}}
{{- end -}}
{{- end -}}
{{/* the claims' specs the kind holds (files/apiserver.yaml extraObjects.claimSpecs) */}}
{{- $claims := index (default dict (index $E.claimSpecs $grp)) $o.kind -}}
{{- if kindIs "string" $claims -}}
{{- $hits := list (dict "p" $path "v" $o) -}}
{{- range $k := splitList "." $claims -}}
{{- $next := list -}}
{{- range $h := $hits -}}
{{- if kindIs "map" $h.v -}}
{{- if hasSuffix "[*]" $k -}}
{{- $items := index $h.v (trimSuffix "[*]" $k) -}}
{{- if kindIs "slice" $items -}}{{- range $i, $x := $items -}}{{- $next = append $next (dict "p" (printf "%s.%s[%d]" $h.p (trimSuffix "[*]" $k) $i) "v" $x) -}}{{- end -}}{{- end -}}
{{- else -}}
{{- $next = append $next (dict "p" (printf "%s.%s" $h.p $k) "v" (index $h.v $k)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $hits = $next -}}
{{- end -}}
{{- range $h := $hits -}}{{- include "kvgen.extraClaimSpec" (list $s $A $h.p $h.v) -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraLabelsAndAnnotations: the labels (ValidateLabels), the annotations' keys (ValidateAnnotations:
case does not matter) and their total size, of an object's metadata or a pod template's (FUNCTION: the API
server's caller; kvgen/plan/extra_objects.py _labels_and_annotations). Usage: (list $s $A PATH META FUNCTION) */}}
{{- define "kvgen.extraLabelsAndAnnotations" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $mp := index . 2 -}}{{- $meta := index . 3 -}}{{- $fn := index . 4 -}}
{{/* ValidateLabels */}}
{{- $labels := index $meta "labels" -}}
{{- if kindIs "map" $labels -}}
{{- range $k, $v := $labels -}}
{{- if not (include "kvgen.apiFits" (list $A "labelKey" $k)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.labels.%s" $mp $k) (printf "%s is not %s (%s: ValidateLabels)" (include "kvgen.quoted" $k) $A.formats.labelKey.what $fn) "") -}}
{{- end -}}
{{- if and (kindIs "string" $v) (not (include "kvgen.apiFits" (list $A "labelValue" $v))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.labels.%s" $mp $k) (printf "%s is not %s (%s: ValidateLabels)" (include "kvgen.quoted" $v) $A.formats.labelValue.what $fn) "") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* ValidateAnnotations: the keys (case does not matter), the total size */}}
{{- $notes := index $meta "annotations" -}}
{{- if kindIs "map" $notes -}}
{{- $np := printf "%s.annotations" $mp -}}
{{- $total := 0 -}}
{{- range $k, $v := $notes -}}
{{- if not (include "kvgen.apiFits" (list $A "labelKey" (lower $k))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $np $k) (printf "%s is not %s (%s: ValidateAnnotations)" (include "kvgen.quoted" $k) $A.formats.labelKey.what $fn) "") -}}
{{- end -}}
{{- if kindIs "string" $v -}}{{- $total = add $total (len $k) (len $v) -}}{{- end -}}
{{- end -}}
{{- $limit := int64 $A.totalAnnotationSizeLimit -}}
{{- if gt (int64 $total) $limit -}}
{{- include "kvgen.problem" (list $s $np (printf "the annotations add up to %d bytes (keys and values); the API server refuses more than %d in all (ValidateAnnotationsSize)" (int64 $total) $limit) (printf "keep %s at most %d bytes; put large data in a ConfigMap" $np $limit)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraClaimSpec: ValidatePersistentVolumeClaimSpec on a claim's spec at PATH: ReadWriteOncePod
alone (kvgen/plan/extra_objects.py _claim_spec; apiserver.check_access_modes). Usage: (list $s $A PATH SPEC) */}}
{{- define "kvgen.extraClaimSpec" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $path := index . 2 -}}{{- $c := index . 3 -}}
{{- if and (kindIs "map" $c) (kindIs "slice" (index $c "accessModes")) -}}
{{- $modes := index $c "accessModes" -}}
{{- $others := false -}}
{{- range $m := $modes -}}{{- if and (has $m $A.accessModes) (ne $m "ReadWriteOncePod") -}}{{- $others = true -}}{{- end -}}{{- end -}}
{{- if and (has "ReadWriteOncePod" $modes) $others -}}
{{- include "kvgen.problem" (list $s (printf "%s.accessModes" $path) "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)" "keep ReadWriteOncePod alone") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraPodSpec: ValidatePodSpec on an extraObjects item's pod spec: container names (DNS-1123
labels, unique across the pod's containers), each container's requests at most its limits, the
volumes (kvgen/plan/extra_objects.py _pod_spec). Usage: (list $s $A PATH POD) */}}
{{- define "kvgen.extraPodSpec" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $path := index . 2 -}}{{- $pod := index . 3 -}}
{{- $names := list -}}
{{- $functions := dict "containers" "validateContainers" "initContainers" "validateInitContainers" "ephemeralContainers" "validateEphemeralContainers" -}}
{{- range $key := list "containers" "initContainers" "ephemeralContainers" -}}
{{- if kindIs "slice" (index $pod $key) -}}
{{- range $i, $c := index $pod $key -}}
{{- if kindIs "map" $c -}}
{{- $at := printf "%s.%s[%d]" $path $key $i -}}
{{- $n := index $c "name" -}}
{{- if kindIs "string" $n -}}
{{- if not (include "kvgen.apiFits" (list $A "dns1123Label" $n)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $at) (printf "%s is not %s (validateContainerCommon: ValidateDNS1123Label)" (include "kvgen.quoted" $n) $A.formats.dns1123Label.what) "") -}}
{{- else if has $n $names -}}
{{- include "kvgen.problem" (list $s (printf "%s.name" $at) (printf "%s: duplicate container name (%s)" (include "kvgen.quoted" $n) (index $functions $key)) "") -}}
{{- end -}}
{{- $names = append $names $n -}}
{{- end -}}
{{- if ne $key "ephemeralContainers" -}}{{- include "kvgen.extraResources" (list $s $A (printf "%s.resources" $at) (index $c "resources")) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $vols := list -}}
{{- if kindIs "slice" (index $pod "volumes") -}}
{{- range $i, $vol := index $pod "volumes" -}}
{{- if kindIs "map" $vol -}}
{{- $sources := list -}}
{{- range $src := $A.volumeSources -}}{{- if include "kvgen.isSet" (list $vol $src) -}}{{- $sources = append $sources $src -}}{{- end -}}{{- end -}}
{{- if ne (len $sources) 1 -}}
{{- include "kvgen.problem" (list $s (printf "%s.volumes[%d]" $path $i) (ternary (printf "may not specify more than 1 volume type (%s; validateVolumeSource)" (join ", " $sources)) "must specify a volume type (validateVolumeSource)" (gt (len $sources) 1)) "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir") -}}
{{- end -}}
{{- $eph := index $vol "ephemeral" -}}
{{- if and (kindIs "map" $eph) (kindIs "map" (index $eph "volumeClaimTemplate")) -}}
{{- include "kvgen.extraClaimSpec" (list $s $A (printf "%s.volumes[%d].ephemeral.volumeClaimTemplate.spec" $path $i) (index (index $eph "volumeClaimTemplate") "spec")) -}}
{{- end -}}
{{- $n := index $vol "name" -}}
{{- if kindIs "string" $n -}}
{{- $p := printf "%s.volumes[%d].name" $path $i -}}
{{- if not (include "kvgen.apiFits" (list $A "dns1123Label" $n)) -}}
{{- include "kvgen.problem" (list $s $p (printf "%s is not %s (ValidateVolumes)" (include "kvgen.quoted" $n) $A.formats.dns1123Label.what) "") -}}
{{- else if has $n $vols -}}
{{- include "kvgen.problem" (list $s $p (printf "%s: duplicate volume name (ValidateVolumes)" (include "kvgen.quoted" $n)) "") -}}
{{- end -}}
{{- $vols = append $vols $n -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraAmount: a quantity kvgen compares, as a float: a number from 0 to numberMax, or a plain quantity
(files/apiserver.yaml extraObjects); "" for any other form (kvgen/plan/extra_objects.py _amount). Usage: (list $A VALUE) */}}
{{- define "kvgen.extraAmount" -}}
{{- $A := index . 0 -}}{{- $v := index . 1 -}}
{{- if or (kindIs "float64" $v) (kindIs "int64" $v) (kindIs "int" $v) -}}
{{- if and (ge (float64 $v) 0.0) (le (float64 $v) (float64 $A.extraObjects.numberMax)) -}}{{- float64 $v -}}{{- end -}}
{{- else if and (kindIs "string" $v) (regexMatch $A.extraObjects.quantity $v) -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $v -}}
{{- $unit := trimPrefix $num $v -}}
{{- $units := dict "" 1.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 -}}
{{- if eq $unit "m" -}}{{- divf (float64 $num) 1000.0 -}}{{- else -}}{{- mulf (float64 $num) (index $units $unit) -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraRaw: a quantity as written (a whole float without a fraction, as kvgen prints it) */}}
{{- define "kvgen.extraRaw" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) -}}{{- printf "%.0f" . -}}{{- else -}}{{- printf "%v" . -}}{{- end -}}
{{- end -}}

{{/* kvgen.extraOvercommit: "true" for a resource that may be overcommitted (helper.IsOvercommitAllowed: a native
resource, no domain or one in kubernetes.io, but hugepages; kvgen/plan/extra_objects.py overcommit_allowed) */}}
{{- define "kvgen.extraOvercommit" -}}
{{- $A := index . 0 -}}{{- $name := index . 1 -}}
{{- if and (not (hasPrefix "hugepages-" $name)) (or (not (contains "/" $name)) (contains $A.nativeResourceDomain $name)) -}}true{{- end -}}
{{- end -}}

{{/* kvgen.extraDiffer: "true" when two quantities surely differ: in one unit, their numbers differ (exact in
float64 at the 15 digits kvgen.extraAmount allows); in two, their values differ by more than a billionth,
closer ones left to the API server (kvgen/plan/extra_objects.py _differ). Usage: (list $A REQUEST LIMIT) */}}
{{- define "kvgen.extraDiffer" -}}
{{- $A := index . 0 -}}{{- $a := index . 1 -}}{{- $b := index . 2 -}}
{{- $x := include "kvgen.extraAmount" (list $A $a) -}}{{- $y := include "kvgen.extraAmount" (list $A $b) -}}
{{- if and $x $y -}}
{{- $na := $a -}}{{- $ua := "" -}}{{- if kindIs "string" $a -}}{{- $na = regexFind "^[0-9.]+" $a -}}{{- $ua = trimPrefix $na $a -}}{{- end -}}
{{- $nb := $b -}}{{- $ub := "" -}}{{- if kindIs "string" $b -}}{{- $nb = regexFind "^[0-9.]+" $b -}}{{- $ub = trimPrefix $nb $b -}}{{- end -}}
{{- if eq $ua $ub -}}
{{- if ne (float64 $na) (float64 $nb) -}}true{{- end -}}
{{- else -}}
{{- $d := subf (float64 $x) (float64 $y) -}}{{- if lt $d 0.0 -}}{{- $d = mulf $d -1.0 -}}{{- end -}}
{{- if gt $d (mulf 0.000000001 (maxf (float64 $x) (float64 $y))) -}}true{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraResources: ValidateContainerResourceRequirements: a request above its limit; a request of a
resource that cannot be overcommitted (extended, hugepages) without a limit, or other than it
(kvgen/plan/extra_objects.py _resources). Usage: (list $s $A PATH RESOURCES) */}}
{{- define "kvgen.extraResources" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $p := index . 2 -}}{{- $r := index . 3 -}}
{{- if kindIs "map" $r -}}
{{- $req := index $r "requests" -}}{{- if not (kindIs "map" $req) -}}{{- $req = dict -}}{{- end -}}
{{- $lim := index $r "limits" -}}{{- if not (kindIs "map" $lim) -}}{{- $lim = dict -}}{{- end -}}
{{- range $name := $A.extraObjects.resources -}}
{{- $a := include "kvgen.extraAmount" (list $A (index $req $name)) -}}
{{- $b := include "kvgen.extraAmount" (list $A (index $lim $name)) -}}
{{- if and $a $b -}}
{{- if gt (float64 $a) (float64 $b) -}}
{{- include "kvgen.problem" (list $s (printf "%s.requests.%s" $p $name) (printf "%s must be less than or equal to %s limit of %s (ValidateContainerResourceRequirements)" (include "kvgen.extraRaw" (index $req $name)) $name (include "kvgen.extraRaw" (index $lim $name))) (printf "lower %s.requests.%s or raise %s.limits.%s" $p $name $p $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $rq := $req -}}
{{- if not (include "kvgen.extraOvercommit" (list $A $name)) -}}
{{- if not (hasKey $lim $name) -}}
{{- include "kvgen.problem" (list $s (printf "%s.limits.%s" $p $name) (printf "required: %s cannot be overcommitted, so its request needs a limit equal to it (ValidateContainerResourceRequirements)" $name) (printf "set %s.limits.%s to the request, or give the limit alone (the request defaults to it)" $p $name)) -}}
{{- else if include "kvgen.extraDiffer" (list $A $rq (index $lim $name)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.requests.%s" $p $name) (printf "%s must be equal to %s limit of %s: it cannot be overcommitted (ValidateContainerResourceRequirements)" (include "kvgen.extraRaw" $rq) $name (include "kvgen.extraRaw" (index $lim $name))) (printf "make %s.requests.%s equal to %s.limits.%s, or leave the request out" $p $name $p $name)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.extraObjectWarnings: an object of a kind kvgen has no schema for, a List's items each
(kvgen/plan/extra_objects.py warnings). Returns a JSON list. */}}
{{- define "kvgen.extraObjectWarnings" -}}
{{- $s := . -}}
{{- $out := list -}}
{{- range $at := include "kvgen.extraCreated" $s | fromJsonArray -}}
{{- $o := index $s.V.extraObjects (int (first $at)) -}}{{- $path := printf "extraObjects[%d]" (int (first $at)) -}}
{{- range $j := rest $at -}}{{- $o = index $o.items (int $j) -}}{{- $path = printf "%s.items[%d]" $path (int $j) -}}{{- end -}}
{{- if and (include "kvgen.extraWellFormed" $o) (not (include "kvgen.extraIsList" (list $s $o))) (not (include "kvgen.hasSchema" (list $s $o.apiVersion $o.kind))) -}}
{{- $out = append $out (printf "%s: %s %s is not validated: kvgen has no schema for it" $path $o.apiVersion $o.kind) -}}
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
{{- if $c.service -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "Service" "name" $c.service.name) -}}{{- end -}}
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
{{- if $c.prometheusRule -}}{{- $out = append $out (dict "apiVersion" "monitoring.coreos.com/v1" "kind" "PrometheusRule" "name" $c.prometheusRule.name) -}}{{- end -}}
{{- if $c.dashboard -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "ConfigMap" "name" $c.dashboard.name) -}}{{- end -}}
{{- if $c.scaledObject -}}{{- $out = append $out (dict "apiVersion" "keda.sh/v1alpha1" "kind" "ScaledObject" "name" $c.scaledObject.name) -}}{{- end -}}
{{- if $c.hpa -}}{{- $out = append $out (dict "apiVersion" "autoscaling/v2" "kind" "HorizontalPodAutoscaler" "name" $c.hpa.name) -}}{{- end -}}
{{- if $c.routing -}}
{{- with $c.routing.sidecarAccess -}}
{{- if .createServiceAccount -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" "ServiceAccount" "name" .serviceAccount) -}}{{- end -}}
{{- $out = append $out (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "Role" "name" .role) -}}
{{- $out = append $out (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" "RoleBinding" "name" .roleBinding) -}}
{{- end -}}
{{- with $c.routing.picker -}}
{{- $p := .names -}}
{{- range $pair := list (list "ServiceAccount" $p.serviceAccount) (list "ConfigMap" $p.configMap) (list "Service" $p.service) -}}{{- $out = append $out (dict "apiVersion" "v1" "kind" (index $pair 0) "name" (index $pair 1)) -}}{{- end -}}
{{- range $pair := list (list "Role" $p.role) (list "RoleBinding" $p.roleBinding) -}}{{- $out = append $out (dict "apiVersion" "rbac.authorization.k8s.io/v1" "kind" (index $pair 0) "name" (index $pair 1)) -}}{{- end -}}
{{- $out = append $out (dict "apiVersion" "apps/v1" "kind" "Deployment" "name" $p.deployment) -}}
{{- end -}}
{{- with $c.routing.pool -}}{{- $out = append $out (dict "apiVersion" "inference.networking.k8s.io/v1" "kind" "InferencePool" "name" .name) -}}{{- end -}}
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
{{- range $at := include "kvgen.extraCreated" $s | fromJsonArray -}}
{{- $o := index $s.V.extraObjects (int (first $at)) -}}{{- $path := printf "extraObjects[%d]" (int (first $at)) -}}
{{- range $j := rest $at -}}{{- $o = index $o.items (int $j) -}}{{- $path = printf "%s.items[%d]" $path (int $j) -}}{{- end -}}
{{- if and (include "kvgen.extraWellFormed" $o) (not (include "kvgen.extraIsList" (list $s $o))) -}}
{{- $key := printf "%s\x00%s\x00%s" (include "kvgen.apiGroup" $o.apiVersion) $o.kind $o.metadata.name -}}
{{- if hasKey $own $key -}}
{{- $mine := index $own $key -}}
{{- include "kvgen.problem" (list $s (printf "%s.metadata.name" $path) (printf "%s %s is kvgen's own %s %s %s: one of them would replace the other" $o.kind (include "kvgen.quoted" $o.metadata.name) $mine.apiVersion $mine.kind (include "kvgen.quoted" $mine.name)) "rename it, or set what you need through the spec's own fields (see `kvgen schema`)") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
