{{/*
kvgen.checkKeys: every unknown key of the values, at its spec path, in kvgen's words
(kvgen/input/spec_errors.py: "unknown key 'kvCacheOffloding'", hint "did you mean
'kvCacheOffloading'?" for a near one, else "allowed keys: ..."). values.schema.json leaves unknown
keys of kvgen's own objects to this check (Helm's validator says only "at '': additional
properties ... not allowed"); files/spec-keys.json (kvgen/spec/schema.py spec_keys) holds the keys
each object allows and where each leads. Helm's `global` is the chart's own, at the top level.
Usage: {{- include "kvgen.checkKeys" $s -}}
*/}}
{{- define "kvgen.checkKeys" -}}
{{- $table := .F.Get "files/spec-keys.json" | fromJson -}}
{{- include "kvgen.checkKeysAt" (list . $table .V "$root" "") -}}
{{- end -}}

{{/* kvgen.checkKeysAt: (list $s table value ref path); ref as in files/spec-keys.json */}}
{{- define "kvgen.checkKeysAt" -}}
{{- $s := index . 0 -}}{{- $table := index . 1 -}}{{- $v := index . 2 -}}{{- $ref := index . 3 -}}{{- $path := index . 4 -}}
{{- if hasPrefix "[]" $ref -}}
{{- if kindIs "slice" $v -}}
{{- range $i, $item := $v -}}{{- include "kvgen.checkKeysAt" (list $s $table $item (trimPrefix "[]" $ref) (printf "%s[%d]" $path $i)) -}}{{- end -}}
{{- end -}}
{{- else if hasPrefix "{}" $ref -}}
{{- if kindIs "map" $v -}}
{{- range $k := keys $v | sortAlpha -}}{{- include "kvgen.checkKeysAt" (list $s $table (index $v $k) (trimPrefix "{}" $ref) (printf "%s.%s" $path $k)) -}}{{- end -}}
{{- end -}}
{{- else if and (kindIs "map" $v) (hasKey $table $ref) -}}
{{- $def := index $table $ref -}}
{{- range $k := keys $v | sortAlpha -}}
{{- $p := $k -}}{{- if $path -}}{{- $p = printf "%s.%s" $path $k -}}{{- end -}}
{{- if has $k $def.keys -}}
{{- $child := get $def.children $k -}}
{{- if $child -}}{{- include "kvgen.checkKeysAt" (list $s $table (index $v $k) $child $p) -}}{{- end -}}
{{- else if not (and (eq $ref "$root") (eq $k "global")) -}}
{{- $close := include "kvgen.suggest" (list $k $def.keys) -}}
{{- $hint := printf "allowed keys: %s" (join ", " $def.keys) -}}
{{- if $close -}}{{- $hint = printf "did you mean %s?" (include "kvgen.quoted" $close) -}}{{- end -}}
{{- include "kvgen.problem" (list $s $p (printf "unknown key %s" (include "kvgen.quoted" $k)) $hint) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
