{{/*
What the Kubernetes API server (or the kubelet) would refuse in the objects the chart renders:
the chart's counterpart of kvgen/plan/apiserver.py. The rules are the rows of files/apiserver.yaml
`checks`, interpreted by kvgen.apiTable as apiserver._table does; the few rules the table says stay
code are in kvgen.checkApiserver. Sizes are compared as floats (never as int64, which overflows at 8 EiB).
*/}}

{{/* kvgen.apiFits: "true" when a string fits one of the formats (apiserver.fits). Usage: include "kvgen.apiFits" (list $A "labelValue" $value) */}}
{{- define "kvgen.apiFits" -}}
{{- $A := index . 0 -}}{{- $f := index $A.formats (index . 1) -}}{{- $v := index . 2 -}}
{{- if not (kindIs "string" $v) -}}
{{- else if hasKey $f "name" -}}
{{- $parts := splitList "/" $v -}}
{{- if and (le (len $parts) 2) (or (eq (len $parts) 1) (include "kvgen.apiFits" (list $A $f.prefix (first $parts)))) (include "kvgen.apiFits" (list $A $f.name (last $parts))) }}true{{ end -}}
{{- else if and (le (len $v) (int $f.maxLength)) (regexMatch $f.pattern $v) (not (and (hasKey $f "except") (regexMatch (toString $f.except) $v))) }}true{{ end -}}
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

{{/* kvgen.apiAmount: a quantity as a float: cpu in cores, every other resource in bytes. Usage: include "kvgen.apiAmount" (list "cpu" $value) */}}
{{- define "kvgen.apiAmount" -}}
{{- if eq (index . 0) "cpu" -}}{{- include "kvgen.cpuF" (index . 1) -}}{{- else -}}{{- include "kvgen.bytesF" (index . 1) -}}{{- end -}}
{{- end -}}

{{/* kvgen.apiTable: the rows of files/apiserver.yaml `checks` (apiserver._table), problems recorded in $s;
     $seen.quantityMax is set when a size was refused. Usage: include "kvgen.apiTable" (list $s $A $facts $seen) */}}
{{- define "kvgen.apiTable" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $facts := index . 2 -}}{{- $seen := index . 3 -}}
{{- $refused := dict -}}{{/* the paths the table refused: skipRefused rows leave them alone */}}
{{- $reservedTable := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.reserved -}}
{{- range $row := $A.checks -}}
{{- if or (not (hasKey $row "when")) (include "kvgen.holds" (list $row.when $facts)) -}}
{{- $before := deepCopy $refused -}}
{{- $values := dict -}}{{/* unique: the row's values so far */}}
{{- $limit := 0.0 -}}{{- $limitText := "" -}}
{{- if hasKey $row "limit" -}}
{{- if kindIs "string" $row.limit -}}{{- $limit = float64 (index $A $row.limit) -}}{{- $limitText = toString (index $A (printf "%sText" $row.limit)) -}}{{- else -}}{{- $limit = float64 $row.limit -}}{{- end -}}
{{- end -}}
{{- range $pattern := $row.fields -}}
{{/* the values at the path pattern: [*] every item of a list, * every entry of a map */}}
{{- $hits := list (dict "p" "" "v" $facts.spec) -}}
{{- range $part := splitList "." (replace "[*]" ".[*]" $pattern) -}}
{{- $next := list -}}
{{- range $h := $hits -}}
{{- $dot := ternary "" "." (eq $h.p "") -}}
{{- if eq $part "[*]" -}}
{{- if kindIs "slice" $h.v -}}{{- range $i, $x := $h.v -}}{{- if not (kindIs "invalid" $x) -}}{{- $next = append $next (dict "p" (printf "%s[%d]" $h.p $i) "v" $x) -}}{{- end -}}{{- end -}}{{- end -}}
{{- else if eq $part "*" -}}
{{- if kindIs "map" $h.v -}}{{- range $k, $x := $h.v -}}{{- if not (kindIs "invalid" $x) -}}{{- $next = append $next (dict "p" (printf "%s%s%s" $h.p $dot $k) "v" $x "k" $k) -}}{{- end -}}{{- end -}}{{- end -}}
{{- else if include "kvgen.isSet" (list $h.v $part) -}}
{{- $next = append $next (dict "p" (printf "%s%s%s" $h.p $dot $part) "v" (index $h.v $part)) -}}
{{- end -}}
{{- end -}}
{{- $hits = $next -}}
{{- end -}}
{{- range $h := $hits -}}
{{- $x := $h.v -}}{{- if eq (toString $row.subject) "key" -}}{{- $x = $h.k -}}{{- end -}}
{{- $duplicate := false -}}
{{- if and (eq $row.check "unique") (kindIs "string" $x) -}}
{{- $key := ternary (trimSuffix "/" $x) $x (eq (toString $row.normalize) "trailingSlash") -}}
{{- $duplicate = hasKey $values $key -}}
{{- $_ := set $values $key true -}}
{{- end -}}

{{- $str := and (kindIs "string" $x) (or (ne (toString $x) "") (not $row.skipEmpty)) -}}
{{- $num := or (kindIs "int" $x) (kindIs "int64" $x) (kindIs "float64" $x) -}}
{{- $found := list -}}
{{- $w := dict -}}
{{- if eq $row.check "format" -}}
{{- if and $str (not (include "kvgen.apiFits" (list $A $row.format $x))) -}}{{- $found = list (dict "p" $h.p "what" (index $A.formats $row.format).what) -}}{{- end -}}
{{- else if eq $row.check "forbidden" -}}
{{- $found = list (dict "p" $h.p) -}}
{{- else if eq $row.check "exclusive" -}}
{{- if kindIs "map" $x -}}
{{- $keys := $row.keys -}}{{- if kindIs "string" $row.keys -}}{{- $keys = index $A $row.keys -}}{{- end -}}
{{- $given := list -}}
{{- range $k := $keys -}}{{- if and (include "kvgen.isSet" (list $x $k)) (ne (toString (index $x $k)) "") -}}{{- $given = append $given $k -}}{{- end -}}{{- end -}}
{{- if ternary (eq (len $given) 0) (gt (len $given) 1) (eq (int64 (default 0 $row.atLeast)) 1) -}}
{{- $found = list (dict "p" (ternary (printf "%s.%s" $h.p (toString $row.at)) $h.p (hasKey $row "at")) "keys" (join ", " $keys) "found" (join ", " $given)) -}}
{{- end -}}
{{- end -}}
{{- else if eq $row.check "unique" -}}
{{- if $duplicate -}}{{- $found = list (dict "p" $h.p) -}}{{- end -}}
{{- else if eq $row.check "reserved" -}}
{{- if kindIs "string" $x -}}
{{- $ours := list -}}
{{- $path := eq (toString $row.match) "path" -}}
{{- range $r := index $reservedTable $row.names -}}
{{- if or (eq $x $r) (and $path (include "kvgen.pathInside" (list $x $r))) -}}{{- $ours = append $ours $r -}}{{- end -}}
{{- end -}}
{{- range $pre := default list (index $reservedTable (toString $row.prefixes)) -}}
{{- if or (hasPrefix $pre $x) (and $path (include "kvgen.pathInside" (list $x $pre))) -}}{{- $ours = append $ours (printf "%sN" $pre) -}}{{- end -}}
{{- end -}}
{{- if $ours -}}{{- $found = list (dict "p" $h.p "reserved" (first $ours)) -}}{{- end -}}
{{- end -}}
{{- else if eq $row.check "oneOf" -}}
{{- if and $str (not (has $x (index $A $row.values))) -}}{{- $found = list (dict "p" $h.p "values" (join ", " (index $A $row.values))) -}}{{- end -}}
{{- else if eq $row.check "required" -}}
{{- if kindIs "map" $x -}}
{{- $y := $x -}}
{{- range $k := splitList "." $row.key -}}{{- if kindIs "map" $y -}}{{- $y = index $y $k -}}{{- else -}}{{- $y = index dict "unset" -}}{{- end -}}{{- end -}}
{{- if or (kindIs "invalid" $y) (and (kindIs "slice" $y) (eq (len $y) 0)) -}}{{- $found = list (dict "p" (printf "%s.%s" $h.p $row.key)) -}}{{- end -}}
{{- end -}}
{{- else if eq $row.check "atMost" -}}
{{- if and $num (gt (float64 $x) $limit) -}}{{- $found = list (dict "p" $h.p) -}}{{- end -}}
{{- else if eq $row.check "above" -}}
{{- if and $num (le (float64 $x) $limit) -}}{{- $found = list (dict "p" $h.p) -}}{{- end -}}
{{- else if eq $row.check "quantityMax" -}}
{{- if gt (include "kvgen.bytesF" $x | float64) $limit -}}{{- $found = list (dict "p" $h.p) -}}{{- $_ := set $seen "quantityMax" true -}}{{- end -}}
{{- else if eq $row.check "requestsWithinLimits" -}}
{{- $req := default dict $x.requests -}}{{- $lim := default dict $x.limits -}}
{{- range $r := $row.resources -}}
{{- if and (include "kvgen.isSet" (list $req $r)) (include "kvgen.isSet" (list $lim $r)) (gt (include "kvgen.apiAmount" (list $r (index $req $r)) | float64) (include "kvgen.apiAmount" (list $r (index $lim $r)) | float64)) -}}
{{- $found = append $found (dict "p" (printf "%s.requests.%s" $h.p $r) "raw" (printf "%v" (index $req $r)) "other" (printf "%v" (index $lim $r)) "resource" $r "field" $h.p) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- fail (printf "kvgen chart: files/apiserver.yaml has a row of check %q that templates/plan/_apiserver.tpl does not know" $row.check) -}}
{{- end -}}
{{- range $f := $found -}}
{{/* the words: the table's first, the value last (a value may contain a placeholder's text) */}}
{{- $raw := $f.raw -}}{{- if not $raw -}}{{- $raw = ternary (printf "%.0f" (float64 $x)) (printf "%v" $x) $num -}}{{- end -}}
{{- $say := list -}}
{{- range $text := list $row.message (default "" $row.hint) -}}
{{- $text = $text | replace "{what}" (toString $f.what) | replace "{values}" (toString $f.values) | replace "{resource}" (toString $f.resource) | replace "{field}" (toString $f.field) -}}
{{- $text = $text | replace "{limitText}" $limitText | replace "{limit}" (printf "%.0f" $limit) | replace "{other}" (toString $f.other) | replace "{reserved}" (toString $f.reserved) | replace "{keys}" (toString $f.keys) | replace "{found}" (toString $f.found) | replace "{raw}" $raw -}}
{{- $say = append $say (replace "{value}" (include "kvgen.quoted" $x) $text) -}}
{{- end -}}
{{- if not (and $row.skipRefused (hasKey $before $f.p)) -}}
{{- include "kvgen.problem" (list $s $f.p (index $say 0) (index $say 1)) -}}
{{- $_ := set $refused $f.p true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.apiClaimRef: an existing claim's name and the mount's subPath (apiserver._check_claim_ref). Usage: include "kvgen.apiClaimRef" (list $s $A namePath pathPath $name $subPath) */}}
{{- define "kvgen.apiClaimRef" -}}
{{- $s := index . 0 -}}{{- $A := index . 1 -}}{{- $name := index . 4 -}}{{- $sub := index . 5 -}}
{{- if not (include "kvgen.apiFits" (list $A "dns1123Subdomain" $name)) -}}
{{- include "kvgen.problem" (list $s (index . 2) (printf "%s cannot name a PersistentVolumeClaim: %s; the pod would wait for a claim that cannot exist (ValidatePersistentVolumeClaim, ValidatePersistentVolumeName)" (include "kvgen.quoted" $name) $A.formats.dns1123Subdomain.what) "use the claim's metadata.name") -}}
{{- end -}}
{{- if and (kindIs "string" $sub) $sub -}}
{{- if hasPrefix "/" $sub -}}
{{- include "kvgen.problem" (list $s (index . 3) (printf "%s must be a relative path inside the claim (it becomes the mount's subPath; validateLocalDescendingPath)" (include "kvgen.quoted" $sub)) (printf "write it as %s" (include "kvgen.quoted" (regexReplaceAll "^/+" $sub "")))) -}}
{{- end -}}
{{- if has ".." (splitList "/" $sub) -}}
{{- include "kvgen.problem" (list $s (index . 3) (printf "%s must not contain '..' (it becomes the mount's subPath; validateLocalDescendingPath)" (include "kvgen.quoted" $sub)) "name a directory inside the claim") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkApiserver: every rule of kvgen/plan/apiserver.py check_spec, recorded as problems in $s. */}}
{{- define "kvgen.checkApiserver" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $A := $s.F.Get "files/apiserver.yaml" | fromYaml -}}
{{- $o := $v.kvCacheOffloading -}}
{{- $seen := dict -}}
{{- include "kvgen.apiTable" (list $s $A (dict "spec" $v "instance" $s.inst) $seen) -}}

{{/* the emptyDir tiers' sum, when no size was refused by itself */}}
{{- $tiersF := 0.0 -}}
{{- range $t := $o.secondary -}}
{{- if include "kvgen.isSet" (list $t.fileSystem "emptyDir") -}}{{- $tiersF = addf $tiersF (include "kvgen.bytesF" $t.fileSystem.emptyDir.size | float64) -}}{{- end -}}
{{- end -}}
{{- if and (gt $tiersF (float64 $A.maxBytes)) (not $seen.quantityMax) -}}
{{- include "kvgen.problem" (list $s "kvCacheOffloading.secondary" (printf "the emptyDir tiers add up to more than kvgen's bound of %s for the pod's ephemeral storage" $A.maxBytesText) (printf "keep their sum at most %s" $A.maxBytesText)) -}}
{{- end -}}

{{/* disk tiers: a claim template's ReadWriteOncePod and storage (ValidatePersistentVolumeClaimSpec); an existing claim */}}
{{- range $n, $t := $o.secondary -}}
{{- $base := printf "kvCacheOffloading.secondary[%d].fileSystem.pvc" $n -}}
{{- if include "kvgen.isSet" (list $t.fileSystem "pvc") -}}
{{- if include "kvgen.isSet" (list $t.fileSystem.pvc "spec") -}}
{{- $pvc := $t.fileSystem.pvc.spec -}}
{{- if kindIs "slice" $pvc.accessModes -}}
{{- $others := false -}}
{{- range $m := $pvc.accessModes -}}{{- if and (has $m $A.accessModes) (ne $m "ReadWriteOncePod") -}}{{- $others = true -}}{{- end -}}{{- end -}}
{{- if and (has "ReadWriteOncePod" $pvc.accessModes) $others -}}
{{- include "kvgen.problem" (list $s (printf "%s.spec.accessModes" $base) "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)" "keep ReadWriteOncePod alone") -}}
{{- end -}}
{{- end -}}
{{- if and (kindIs "map" $pvc.resources) (kindIs "map" $pvc.resources.requests) (include "kvgen.isSet" (list $pvc.resources.requests "storage")) -}}
{{- $storage := $pvc.resources.requests.storage -}}
{{- $path := printf "%s.spec.resources.requests.storage" $base -}}
{{- if not (or (and (kindIs "string" $storage) (regexMatch "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$" $storage)) (and (or (kindIs "float64" $storage) (kindIs "int64" $storage) (kindIs "int" $storage)) (eq (floor $storage) (float64 $storage)) (ge (float64 $storage) 0.0))) -}}
{{- include "kvgen.problem" (list $s $path (printf "%s is not a size (kvgen reads a claim's size as it reads every size)" (ternary (include "kvgen.quoted" $storage) (printf "%v" $storage) (kindIs "string" $storage))) "write it as a Kubernetes quantity such as 100Gi, 512Mi or 1T") -}}
{{- else if le (include "kvgen.bytesF" $storage | float64) 0.0 -}}
{{- include "kvgen.problem" (list $s $path (printf "%v must be greater than zero (ValidatePersistentVolumeClaimSpec)" $storage) "request e.g. 100Gi") -}}
{{- else if gt (include "kvgen.bytesF" $storage | float64) (float64 $A.maxBytes) -}}
{{- include "kvgen.problem" (list $s $path (printf "%v is above kvgen's bound of %s for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)" $storage $A.maxBytesText) (printf "use at most %s" $A.maxBytesText)) -}}
{{- end -}}
{{- end -}}
{{- else if include "kvgen.isSet" (list $t.fileSystem.pvc "ref") -}}
{{- $ref := $t.fileSystem.pvc.ref -}}
{{- include "kvgen.apiClaimRef" (list $s $A (printf "%s.ref.name" $base) (printf "%s.ref.path" $base) $ref.name $ref.path) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* model.uri pvc://CLAIM/PATH: the claim's name and the mount's subPath */}}
{{- if $v.model.uri -}}
{{- $pvc := include "kvgen.modelPvc" $v | fromJson -}}
{{- include "kvgen.apiClaimRef" (list $s $A "model.uri" "model.uri" $pvc.claim $pvc.path) -}}
{{- end -}}
{{/* model.cache.claimTemplate: ReadWriteOncePod alone (ValidatePersistentVolumeClaimSpec) */}}
{{- $mcache := (default dict $v.model).cache -}}
{{- if and (kindIs "map" $mcache) (kindIs "map" $mcache.claimTemplate) -}}
{{- $modes := $mcache.claimTemplate.accessModes -}}
{{- if and (kindIs "slice" $modes) (has "ReadWriteOncePod" $modes) (without $modes "ReadWriteOncePod") -}}
{{- include "kvgen.problem" (list $s "model.cache.claimTemplate.accessModes" "ReadWriteOncePod may not be combined with other access modes (ValidatePersistentVolumeClaimSpec)" "keep ReadWriteOncePod alone") -}}
{{- end -}}
{{- end -}}
{{/* model.cache.claim: the claim's name and the mount's subPath (its path, else org--name) */}}
{{- $mc := include "kvgen.modelCache" $v | fromJson -}}
{{- if $mc.claim -}}
{{- include "kvgen.apiClaimRef" (list $s $A "model.cache.claim.name" "model.cache.claim.path" $mc.claim $mc.path) -}}
{{- end -}}

{{/* tolerations: ValidateTolerations between a toleration's fields */}}
{{- $sched := default dict $v.scheduling -}}
{{- range $i, $tol := default list $sched.tolerations -}}
{{- if kindIs "map" $tol -}}
{{- $base := printf "scheduling.tolerations[%d]" $i -}}
{{- $key := "" -}}{{- if kindIs "string" $tol.key -}}{{- $key = $tol.key -}}{{- end -}}
{{- $op := "" -}}{{- if kindIs "string" $tol.operator -}}{{- $op = $tol.operator -}}{{- end -}}
{{- $val := "" -}}{{- if kindIs "string" $tol.value -}}{{- $val = $tol.value -}}{{- end -}}
{{- $eff := "" -}}{{- if kindIs "string" $tol.effect -}}{{- $eff = $tol.effect -}}{{- end -}}
{{- $secs := and (or (kindIs "float64" $tol.tolerationSeconds) (kindIs "int64" $tol.tolerationSeconds) (kindIs "int" $tol.tolerationSeconds)) true -}}
{{- if and (not $key) (ne $op "Exists") -}}
{{- include "kvgen.problem" (list $s (printf "%s.operator" $base) "operator must be Exists when key is empty (which means \"match all values and all keys\") (ValidateTolerations)" "set operator: Exists, or name the taint's key") -}}
{{- end -}}
{{- if and $secs (ne $eff "NoExecute") -}}
{{- include "kvgen.problem" (list $s (printf "%s.effect" $base) "effect must be NoExecute when tolerationSeconds is set (ValidateTolerations)" "set effect: NoExecute, or remove tolerationSeconds") -}}
{{- end -}}
{{- if and $secs (or (ge (float64 $tol.tolerationSeconds) 9223372036854775807.0) (lt (float64 $tol.tolerationSeconds) -9223372036854775808.0)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.tolerationSeconds" $base) (printf "%v does not fit the int64 field" $tol.tolerationSeconds) "") -}}
{{- end -}}
{{- if and (or (eq $op "Equal") (eq $op "")) (not (include "kvgen.apiFits" (list $A "labelValue" $val))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.value" $base) (printf "%s is not %s (ValidateTolerations)" (include "kvgen.quoted" $val) $A.formats.labelValue.what) "") -}}
{{- else if and (eq $op "Exists") $val -}}
{{- include "kvgen.problem" (list $s (printf "%s.value" $base) "value must be empty when operator is Exists (ValidateTolerations)" "remove value, or use operator: Equal") -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/* the StatefulSets' controller-revision-hash label */}}
{{- $nodes := float64 $v.parallelism.nodes -}}
{{- if gt $nodes 1.0 -}}
{{- $room := sub (sub (int64 $A.formats.labelValue.maxLength) 1) (int64 $A.revisionHashMaxLength) -}}
{{/* a LeaderWorkerSet's controller makes the leaders' <name> and each group's workers' <name>-<group> */}}
{{- $names := list $v.name (printf "%s-worker" $v.name) -}}
{{- if eq $v.multiNode.engine "leaderworkerset" -}}{{- $names = list $v.name (printf "%s-%d" $v.name (max (sub (int64 $v.replicas) 1) 0)) -}}{{- end -}}
{{- range $sts := $names -}}
{{- if gt (len $sts) (int $room) -}}
{{- include "kvgen.problem" (list $s "name" (printf "the StatefulSet %s (%d characters) can never create its pods: they carry the label controller-revision-hash=<StatefulSet name>-<hash of up to %d characters>, and a label value is at most %d characters, so a StatefulSet's name may have at most %d" (include "kvgen.quoted" $sts) (len $sts) (int64 $A.revisionHashMaxLength) (int64 $A.formats.labelValue.maxLength) $room) (printf "use a name of at most %d characters for a server spanning several nodes" (sub (len $v.name) (sub (len $sts) $room)))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* pod settings: pod.labels and pod.annotations keys (ValidateLabels, ValidateAnnotations), kvgen's own keys first; the annotations' total size */}}
{{- $podv := default dict $v.pod -}}
{{- $rtw := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring -}}
{{- $ownLabels := list -}}{{- range $k, $l := $rtw.labels -}}{{- if ne $k "instanceType" -}}{{- $ownLabels = append $ownLabels $l -}}{{- end -}}{{- end -}}
{{- $ownLabels = sortAlpha $ownLabels -}}
{{- $ownNotes := list -}}{{- range $k, $l := $rtw.annotations -}}{{- $ownNotes = append $ownNotes $l -}}{{- end -}}
{{- $ownNotes = sortAlpha $ownNotes -}}
{{- $svcv := default dict $v.service -}}
{{/* pod.labels and pod.annotations (the pod template's), service.labels and service.annotations (the Service's), commonLabels and commonAnnotations (every object's) */}}
{{- range $m := list (list "pod.labels" $podv.labels "pod.annotations" $podv.annotations) (list "service.labels" $svcv.labels "service.annotations" $svcv.annotations) (list "commonLabels" $v.commonLabels "commonAnnotations" $v.commonAnnotations) -}}
{{- $lp := index $m 0 -}}{{- $np := index $m 2 -}}{{- $notes := default dict (index $m 3) -}}
{{- range $k, $val := default dict (index $m 1) -}}
{{- if has $k $ownLabels -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $lp $k) (printf "%s is a label kvgen sets itself (its selector and bookkeeping: %s)" (include "kvgen.quoted" $k) (join ", " $ownLabels)) "use another key") -}}
{{- else if not (include "kvgen.apiFits" (list $A "labelKey" $k)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $lp $k) (printf "%s is not %s (ValidateLabels)" (include "kvgen.quoted" $k) $A.formats.labelKey.what) "") -}}
{{- end -}}
{{- end -}}
{{- range $k, $val := $notes -}}
{{- if has $k $ownNotes -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $np $k) (printf "%s is an annotation kvgen sets itself (%s)" (include "kvgen.quoted" $k) (join ", " $ownNotes)) "use another key") -}}
{{- else if not (include "kvgen.apiFits" (list $A "labelKey" (lower $k))) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s" $np $k) (printf "%s is not %s (ValidateAnnotations)" (include "kvgen.quoted" $k) $A.formats.labelKey.what) "") -}}
{{- end -}}
{{- end -}}
{{- $notesTotal := 0 -}}
{{- range $k, $val := $notes -}}{{- $notesTotal = add $notesTotal (len $k) (len (toString $val)) -}}{{- end -}}
{{- $notesRoom := sub (int64 $A.totalAnnotationSizeLimit) (int64 $A.annotationsReserve) -}}
{{- if gt (int64 $notesTotal) $notesRoom -}}
{{- include "kvgen.problem" (list $s $np (printf "the annotations add up to %d bytes (keys and values); the API server refuses more than %d in all (ValidateAnnotationsSize), and kvgen keeps %d of them for its own annotations" (int64 $notesTotal) (int64 $A.totalAnnotationSizeLimit) (int64 $A.annotationsReserve)) (printf "keep %s at most %d bytes; put large data in a ConfigMap" $np $notesRoom)) -}}
{{- end -}}
{{- end -}}

{{/* resources.extra: IsExtendedResourceName (validateResourceName), and no GPU of kvgen's own */}}
{{- range $name, $n := default dict (default dict $v.resources).extra -}}
{{- $gpu := false -}}
{{- range $g := $A.gpuResources -}}{{- if or (eq $name $g) (and (hasSuffix "-" $g) (hasPrefix $g $name)) -}}{{- $gpu = true -}}{{- end -}}{{- end -}}
{{- if $gpu -}}
{{- include "kvgen.problem" (list $s (printf "resources.extra.%s" $name) (printf "%s is requested by kvgen itself, from instance and parallelism" $name) "remove it; set instance.gpus, instance.mig or parallelism") -}}
{{- else if or (not (contains "/" $name)) (contains $A.nativeResourceDomain $name) (not (include "kvgen.apiFits" (list $A "labelKey" $name))) -}}
{{- include "kvgen.problem" (list $s (printf "resources.extra.%s" $name) (printf "%s is not an extended resource name: a domain-prefixed name such as vpc.amazonaws.com/efa or rdma/ib, outside kubernetes.io (IsExtendedResourceName)" (include "kvgen.quoted" $name)) "") -}}
{{- end -}}
{{- end -}}

{{/* pod.volumes: each one source (validateVolumeSource); vllm.volumeMounts: a known volume (validateVolumeMounts);
     names and paths, unique and none of kvgen's own, are rows of the table */}}
{{- $names := list -}}
{{- range $i, $vol := default list (default dict $v.pod).volumes -}}
{{- $sources := list -}}
{{- range $src := $A.volumeSources -}}{{- if include "kvgen.isSet" (list $vol $src) -}}{{- $sources = append $sources $src -}}{{- end -}}{{- end -}}
{{- if ne (len $sources) 1 -}}
{{- include "kvgen.problem" (list $s (printf "pod.volumes[%d]" $i) (ternary (printf "may not specify more than 1 volume type (%s; validateVolumeSource)" (join ", " $sources)) "must specify a volume type (validateVolumeSource)" (gt (len $sources) 1)) "give each volume exactly one source, e.g. persistentVolumeClaim, configMap or emptyDir") -}}
{{- end -}}
{{- if kindIs "string" $vol.name -}}{{- $names = append $names $vol.name -}}{{- end -}}
{{- end -}}
{{- range $i, $m := default list $v.vllm.volumeMounts -}}
{{- if and (kindIs "string" $m.name) (not (has $m.name $names)) -}}
{{- include "kvgen.problem" (list $s (printf "vllm.volumeMounts[%d].name" $i) (printf "%s is not a volume of pod.volumes (validateVolumeMounts: not found)" (include "kvgen.quoted" $m.name)) "add the volume to pod.volumes") -}}
{{- end -}}
{{- end -}}
{{/* deployment.strategy (kvgen/plan/apiserver.py _check_strategy) */}}
{{- $strategy := (default dict $v.deployment).strategy -}}
{{- if kindIs "map" $strategy -}}
{{- $nodes := int64 $v.parallelism.nodes -}}
{{- $rolling := $strategy.rollingUpdate -}}
{{- if gt $nodes 1 -}}
{{- include "kvgen.problem" (list $s "deployment.strategy" (printf "applies to a Deployment; this server spans %d nodes (parallelism.nodes) and is rendered as %s, which kvgen rolls out one pod (group) at a time" $nodes (ternary "a LeaderWorkerSet" "two StatefulSets" (eq $v.multiNode.engine "leaderworkerset"))) "remove deployment.strategy") -}}
{{- else if (include "kvgen.modelCache" $v | fromJson).template -}}
{{- include "kvgen.problem" (list $s "deployment.strategy" "applies to a Deployment; model.cache.claimTemplate (a claim per pod) renders this server as a StatefulSet, which kvgen rolls out one pod at a time" "remove deployment.strategy, or share one claim (model.cache.claim) and keep the Deployment") -}}
{{- else if eq (toString $strategy.type) "Recreate" -}}
{{- if kindIs "map" $rolling -}}
{{- include "kvgen.problem" (list $s "deployment.strategy.rollingUpdate" "may not be specified when strategy `type` is 'Recreate' (ValidateDeploymentStrategy)" "remove rollingUpdate, or use type RollingUpdate") -}}
{{- end -}}
{{- else if kindIs "map" $rolling -}}
{{- $surge := ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.deploymentStrategy.maxSurge -}}
{{- if include "kvgen.isSet" (list $rolling "maxSurge") -}}{{- $surge = $rolling.maxSurge -}}{{- end -}}
{{- if include "kvgen.isSet" (list $rolling "maxUnavailable") -}}
{{- $unavailable := $rolling.maxUnavailable -}}
{{- $path := "deployment.strategy.rollingUpdate.maxUnavailable" -}}
{{- $digits := regexReplaceAll "^0+" (trimSuffix "%" (toString $unavailable)) "" -}}
{{- if and (kindIs "string" $unavailable) (or (gt (len $digits) 3) (gt ($digits | int64) 100)) -}}
{{- include "kvgen.problem" (list $s $path (printf "%s must not be greater than 100%% (IsNotMoreThan100Percent)" (include "kvgen.quoted" $unavailable)) "") -}}
{{- end -}}
{{- if and (or (eq (toString $surge) "0") (eq (toString $surge) "0%")) (or (eq (toString $unavailable) "0") (eq (toString $unavailable) "0%")) -}}
{{- include "kvgen.problem" (list $s $path "may not be 0 when `maxSurge` is 0 (ValidateRollingUpdateDeployment: no pod could be replaced)" "set maxSurge above 0 (the rollout then needs GPUs for the extra pods), or maxUnavailable above 0") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* global.imageRegistry: the chart's spelling of images.registry (the table checks a string) */}}
{{- if and (kindIs "map" $v.global) (include "kvgen.isSet" (list $v.global "imageRegistry")) (not (kindIs "string" $v.global.imageRegistry)) -}}
{{- include "kvgen.problem" (list $s "global.imageRegistry" (printf "%s is not a string; it is the chart's spelling of images.registry, the registry of every image" (toJson $v.global.imageRegistry)) "write the registry's host, e.g. registry.example.com") -}}
{{- end -}}
{{- end -}}

{{/* kvgen.pathInside: "true" when one path is the other or inside it (kvgen/plan/apiserver.py _inside). */}}
{{- define "kvgen.pathInside" -}}
{{- $a := default "/" (trimSuffix "/" (index . 0)) -}}{{- $b := default "/" (trimSuffix "/" (index . 1)) -}}
{{- if or (eq $a $b) (hasPrefix (printf "%s/" (trimSuffix "/" $b)) $a) (hasPrefix (printf "%s/" (trimSuffix "/" $a)) $b) }}true{{ end -}}
{{- end -}}
