{{/*
kvgen.checkKeys: every unknown key of the values, at its spec path, in kvgen's words
(kvgen/input/spec_errors.py: "unknown key 'kvCacheOffloding'", hint "did you mean
'kvCacheOffloading'?" for a near one, else "allowed keys: ..."). values.schema.json leaves unknown
keys of kvgen's own objects to this check (Helm's validator says only "at '': additional
properties ... not allowed"); files/spec-keys.json (kvgen/spec/schema.py spec_keys) holds the keys
each object allows and where each leads. Helm's `global` is the chart's own, at the top level.
Also each value's own checks (files/spec-checks.json, kvgen/spec/schema.py spec_checks: a bound, a length,
a pattern, a set of literals), which the chart's schema leaves to the templates so that a value out of range
does not stop the render before the templates' other problems (every problem in one run, as kvgen
validates): pydantic's words, the first check that fails. A refused value in a section planning does without
($independent) is set to its default (one in a list: the list to empty), as kvgen leaves it out, and kept in
$s.refused; anywhere else it stops planning ($s.stopped).
Usage: {{- include "kvgen.checkKeys" $s -}}
*/}}
{{- define "kvgen.checkKeys" -}}
{{- $table := .F.Get "files/spec-keys.json" | fromJson -}}
{{- $_ := set . "checks" (.F.Get "files/spec-checks.json" | fromJson) -}}
{{- $_ := set . "refused" list -}}
{{- include "kvgen.checkKeysAt" (list . $table .V "$root" "" nil) -}}
{{- end -}}

{{/* kvgen.checkKeysAt: (list $s table value ref path owner); ref as in files/spec-keys.json; owner: the map and
     key of the first list on the path (dict "map" M "key" K), where a refused value in it empties the list */}}
{{- define "kvgen.checkKeysAt" -}}
{{- $s := index . 0 -}}{{- $table := index . 1 -}}{{- $v := index . 2 -}}{{- $ref := index . 3 -}}{{- $path := index . 4 -}}{{- $owner := index . 5 -}}
{{- if hasPrefix "[]" $ref -}}
{{- if kindIs "slice" $v -}}
{{- range $i, $item := $v -}}{{- include "kvgen.checkKeysAt" (list $s $table $item (trimPrefix "[]" $ref) (printf "%s[%d]" $path $i) $owner) -}}{{- end -}}
{{- end -}}
{{- else if hasPrefix "{}" $ref -}}
{{- if kindIs "map" $v -}}
{{- range $k := keys $v | sortAlpha -}}{{- include "kvgen.checkKeysAt" (list $s $table (index $v $k) (trimPrefix "{}" $ref) (printf "%s.%s" $path $k) $owner) -}}{{- end -}}
{{- end -}}
{{- else if and (kindIs "map" $v) (hasKey $table $ref) -}}
{{- $def := index $table $ref -}}
{{- $checks := default (dict) (index $s.checks $ref) -}}
{{- range $k := keys $v | sortAlpha -}}
{{- $p := $k -}}{{- if $path -}}{{- $p = printf "%s.%s" $path $k -}}{{- end -}}
{{- if has $k $def.keys -}}
{{- $child := get $def.children $k -}}
{{- $inner := $owner -}}
{{- if and (not $owner) (hasPrefix "[]" (toString $child)) -}}{{- $inner = dict "map" $v "key" $k -}}{{- end -}}
{{- if hasKey $checks $k -}}{{- include "kvgen.checkValue" (list $s (index $checks $k) $v $k $p $inner) -}}{{- end -}}
{{- if and $child (hasKey $v $k) -}}{{- include "kvgen.checkKeysAt" (list $s $table (index $v $k) $child $p $inner) -}}{{- end -}}
{{- else if not (and (eq $ref "$root") (eq $k "global")) -}}
{{- $close := include "kvgen.suggest" (list $k $def.keys) -}}
{{- $hint := printf "allowed keys: %s" (join ", " $def.keys) -}}
{{- if $close -}}{{- $hint = printf "did you mean %s?" (include "kvgen.quoted" $close) -}}{{- end -}}
{{- include "kvgen.problem" (list $s $p (printf "unknown key %s" (include "kvgen.quoted" $k)) $hint) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkValue: one value's checks (files/spec-checks.json), the first that fails reported in pydantic's
     words (a pattern as kvgen/input/spec_errors.py problem_of words it), and the value then left out as kvgen leaves it out.
     Usage: (list $s ENTRY PARENT KEY PATH OWNER) */}}
{{- define "kvgen.checkValue" -}}
{{- $s := index . 0 -}}{{- $entry := index . 1 -}}{{- $parent := index . 2 -}}{{- $k := index . 3 -}}{{- $path := index . 4 -}}{{- $owner := index . 5 -}}
{{- $value := index $parent $k -}}
{{- $message := "" -}}{{- $hint := "" -}}
{{- if not (kindIs "invalid" $value) -}}
{{- range $c := $entry.checks -}}
{{- if not $message -}}
{{- if eq $c.check "ge" -}}{{- if lt (float64 $value) (float64 $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "gt" -}}{{- if le (float64 $value) (float64 $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "le" -}}{{- if gt (float64 $value) (float64 $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "lt" -}}{{- if ge (float64 $value) (float64 $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "minLength" -}}{{- if lt (len (splitList "" (toString $value))) (int $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "maxLength" -}}{{- if gt (len (splitList "" (toString $value))) (int $c.bound) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "pattern" -}}
{{- if not (regexMatch $c.pattern (toString $value)) -}}
{{- $message = printf "%s is not valid here (must match %s)" (include "kvgen.shortQuoted" $value) $c.pattern -}}{{- $hint = $c.hint -}}
{{- end -}}
{{- else if eq $c.check "enum" -}}{{- if not (has $value $c.values) -}}{{- $message = $c.message -}}{{- end -}}
{{- else if eq $c.check "minItems" -}}{{- if lt (len $value) (int $c.bound) -}}{{- $message = printf $c.format (len $value) -}}{{- end -}}
{{- else if eq $c.check "maxItems" -}}{{- if gt (len $value) (int $c.bound) -}}{{- $message = printf $c.format (len $value) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $message -}}
{{- include "kvgen.problem" (list $s $path $message $hint) -}}
{{- $independent := false -}}
{{- range $q := index $s.checks "$independent" -}}
{{- if or (eq $path $q) (hasPrefix (printf "%s." $q) $path) (hasPrefix (printf "%s[" $q) $path) -}}{{- $independent = true -}}{{- end -}}
{{- end -}}
{{- if not $independent -}}
{{- $_ := set $s "stopped" true -}}
{{- else if $owner -}}
{{- $_ := set $owner.map $owner.key list -}}
{{- $_ := set $s "refused" (append $s.refused (regexReplaceAll "\\[.*$" $path "")) -}}
{{- else -}}
{{- if kindIs "invalid" $entry.default -}}{{- $_ := unset $parent $k -}}{{- else -}}{{- $_ := set $parent $k (deepCopy $entry.default) -}}{{- end -}}
{{- $_ := set $s "refused" (append $s.refused $path) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.shortQuoted: a value as kvgen's problems quote it (kvgen.quoted), cut after 40 characters with their
     count, as kvgen/core/errors.py short_quoted cuts a hostile value. Usage: {{ include "kvgen.shortQuoted" VALUE }} */}}
{{- define "kvgen.shortQuoted" -}}
{{- $text := include "kvgen.quoted" (toString .) -}}
{{- $chars := splitList "" $text -}}
{{- if le (len $chars) 40 -}}{{- $text -}}{{- else -}}{{- printf "%s... (%d characters)" (join "" (slice $chars 0 40)) (len $chars) -}}{{- end -}}
{{- end -}}
