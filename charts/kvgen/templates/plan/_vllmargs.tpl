{{/*
kvgen.checkExtraArgs: the problems of vllm.extraArgs, the chart's counterpart of kvgen/plan/extra_args.py
check_extra_args (the table of kvgen/data/flags.py). The arguments are walked as kvgen/data/contract.py walk_argv walks them (argparse with
the options of files/contract/vllm-<version>.json, as files/vllm-serve-options.json copies them
for the chart; after vLLM's own rewriting: '_' for '-',
dotted keys of JSON options, -O3, -n2): a flag of files/managed-flags.yaml in any spelling is
refused (its value with it); any other option vLLM does not have, a value of the wrong type or
outside the choices, a value missing or given to a switch, or a stray positional is a problem at
vllm.extraArgs[i], with kvgen's "did you mean".
Usage: {{- include "kvgen.checkExtraArgs" $s -}} (after kvgen.resolveModel and kvgen.resolveInstance)
*/}}
{{- define "kvgen.checkExtraArgs" -}}
{{- $s := . -}}
{{- $args := default list $s.V.vllm.extraArgs -}}
{{- if $args -}}
{{- $parser := $s.F.Get "files/vllm-serve-options.json" | fromJson -}}
{{- $options := $parser.options -}}
{{- $managed := ($s.F.Get "files/managed-flags.yaml" | fromYaml).flags -}}
{{- $negative := "^-[0-9]+$|^-[0-9]*\\.[0-9]+$" -}}
{{- $w := dict "problems" list "options" list "positionals" list -}}
{{- $n := len $args -}}
{{- $next := 0 -}}
{{- range $i, $raw := $args -}}
{{- $token := toString $raw -}}
{{- if ge $i $next -}}
{{- $next = add1 $i -}}
{{- if eq $token "--" -}}
{{- range $j := untilStep (int (add1 $i)) $n 1 -}}{{- $_ := set $w "positionals" (append $w.positionals (list $j (toString (index $args $j)))) -}}{{- end -}}
{{- $next = $n -}}
{{- else if or (not (hasPrefix "-" $token)) (regexMatch $negative $token) -}}
{{- $_ := set $w "positionals" (append $w.positionals (list $i $token)) -}}
{{- else -}}
{{- $parts := splitn "=" 2 $token -}}
{{- $name := $parts._0 -}}
{{- $hasInline := contains "=" $token -}}
{{- $inline := default "" $parts._1 -}}
{{/* vLLM reads -O3, -O=3, -Odecode and -O 3 as --optimization-level */}}
{{- if and (hasKey $options "--optimization-level") (hasPrefix "-O" $token) -}}
{{- if ne $token "-O" -}}
{{- $name = "--optimization-level" -}}{{- $hasInline = true -}}
{{- $inline = ternary (substr 3 -1 $token) (substr 2 -1 $token) (eq (substr 2 3 $token) "=") -}}
{{- else if and (lt (add1 $i) $n) (has (toString (index $args (add1 $i))) (list "0" "1" "2" "3")) -}}
{{- $name = "--optimization-level" -}}
{{- end -}}
{{- end -}}
{{/* '_' and '-' are one up to the first '.'; a dotted name is one key of a JSON option */}}
{{- if hasPrefix "--" $name -}}
{{- $dotted := splitn "." 2 (trimPrefix "--" $name) -}}
{{- $tail := ternary (printf ".%s" $dotted._1) "" (contains "." $name) -}}
{{- $name = printf "--%s%s" (replace "_" "-" $dotted._0) $tail -}}
{{- end -}}
{{- $sub := "" -}}
{{- $hasSub := false -}}
{{- if and (contains "." $name) (not (hasKey $options $name)) -}}
{{- $dotted := splitn "." 2 $name -}}
{{- $name = $dotted._0 -}}{{- $sub = $dotted._1 -}}{{- $hasSub = true -}}
{{- end -}}
{{/* argparse: -n2 is -n 2 */}}
{{- if and (not (hasKey $options $name)) (not (hasPrefix "--" $name)) (not $hasInline) (gt (len $name) 2) (hasKey $options (substr 0 2 $name)) -}}
{{- if (index $options (substr 0 2 $name)).takes_value -}}
{{- $inline = substr 2 -1 $name -}}{{- $name = substr 0 2 $name -}}{{- $hasInline = true -}}
{{- end -}}
{{- end -}}
{{- if not (hasKey $options $name) -}}
{{- include "kvgen.argProblem" (list $w $i (printf "%s is not an option of %s" $name $parser.prog) (include "kvgen.unknownOptionHint" (list $name $parser))) -}}
{{- if and (not $hasInline) (lt (add1 $i) $n) -}}
{{- $following := toString (index $args (add1 $i)) -}}
{{- if or (not (hasPrefix "-" $following)) (regexMatch $negative $following) -}}{{- $next = add $i 2 -}}{{- end -}}
{{- end -}}
{{- else -}}
{{- $spec := index $options $name -}}
{{- $option := $name -}}
{{- if $hasSub -}}{{- $name = printf "%s.%s" $name $sub -}}{{- end -}}
{{- $tokens := list $i -}}
{{- $values := list -}}
{{- $complete := true -}}
{{- if not $spec.takes_value -}}
{{- if $hasInline -}}
{{- include "kvgen.argProblem" (list $w $i (printf "%s is a switch and takes no value" $name) (printf "write %s alone" $parts._0)) -}}
{{- end -}}
{{- else if $hasInline -}}
{{- $values = list (list $i $inline) -}}
{{- else -}}
{{- $nargs := $spec.nargs -}}
{{- if or (kindIs "invalid" $nargs) (kindIs "float64" $nargs) (kindIs "int" $nargs) (kindIs "int64" $nargs) -}}
{{- $count := 1 -}}
{{- if not (kindIs "invalid" $nargs) -}}{{- $count = int $nargs -}}{{- end -}}
{{- range $j := untilStep (int (add1 $i)) $n 1 -}}
{{- $v := toString (index $args $j) -}}
{{- if or (ge (len $values) $count) (not (or (not (hasPrefix "-" $v)) (regexMatch $negative $v))) -}}{{- break -}}{{- end -}}
{{- $values = append $values (list $j $v) -}}{{- $tokens = append $tokens $j -}}
{{- end -}}
{{- if lt (len $values) $count -}}
{{- include "kvgen.argProblem" (list $w $i (printf "%s expects %d value(s)" $name $count) (printf "write %s=VALUE" $name)) -}}
{{- $complete = false -}}
{{- end -}}
{{- else -}}
{{- range $j := untilStep (int (add1 $i)) $n 1 -}}
{{- $v := toString (index $args $j) -}}
{{- if or (not (or (not (hasPrefix "-" $v)) (regexMatch $negative $v))) (and (eq (toString $nargs) "?") (gt (len $values) 0)) -}}{{- break -}}{{- end -}}
{{- $values = append $values (list $j $v) -}}{{- $tokens = append $tokens $j -}}
{{- end -}}
{{- if and (eq (toString $nargs) "+") (eq (len $values) 0) -}}
{{- include "kvgen.argProblem" (list $w $i (printf "%s expects at least one value" $name) "") -}}
{{- $complete = false -}}
{{- end -}}
{{- end -}}
{{- $next = add1 (last $tokens) -}}
{{- end -}}
{{- $_ := set $w "options" (append $w.options (dict "index" $i "option" $option "tokens" $tokens)) -}}
{{- if and $complete (not $hasSub) -}}
{{- range $v := $values -}}{{- include "kvgen.checkArgValue" (list $w (index $v 0) $name $spec (index $v 1)) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{/* the flags kvgen owns, then the rest, then stray positionals */}}
{{- $taken := dict -}}
{{- range $o := $w.options -}}
{{- if hasKey $managed $o.option -}}
{{- $row := index $managed $o.option -}}
{{- $message := printf "%s is set by kvgen from %s" $o.option $row.from -}}
{{- if $row.why -}}{{- $message = printf "%s: %s" $message $row.why -}}{{- end -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" (int $o.index)) $message (default (printf "remove it and set %s" $row.from) $row.hint)) -}}
{{- range $t := $o.tokens -}}{{- $_ := set $taken (toString $t) true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- range $p := $w.problems -}}
{{- if not (hasKey $taken (toString $p.index)) -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" (int $p.index)) $p.message $p.hint) -}}
{{- end -}}
{{- end -}}
{{- range $p := $w.positionals -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" (int (index $p 0))) (printf "unexpected positional argument %s (vllm serve takes only the model)" (include "kvgen.quoted" (index $p 1))) "a value belongs to the flag before it: write --flag=value") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.argProblem: record a problem of the argument at an index. Usage: include "kvgen.argProblem" (list $w 3 "message" "hint") */}}
{{- define "kvgen.argProblem" -}}
{{- $w := index . 0 -}}
{{- $_ := set $w "problems" (append $w.problems (dict "index" (index . 1) "message" (index . 2) "hint" (index . 3))) -}}
{{- end -}}

{{/*
kvgen.checkArgValue: a value as argparse converts it (kvgen.contract _check_value): int and float
values written as Python reads them, and choices.
Usage: include "kvgen.checkArgValue" (list $w index "--dtype" $spec "float7")
*/}}
{{- define "kvgen.checkArgValue" -}}
{{- $w := index . 0 -}}{{- $at := index . 1 -}}{{- $name := index . 2 -}}{{- $spec := index . 3 -}}{{- $value := index . 4 -}}
{{- $kind := "" -}}
{{- if not (kindIs "invalid" $spec.type) -}}{{- $kind = toString $spec.type -}}{{- end -}}
{{- $optional := hasPrefix "optional[" $kind -}}
{{- $inner := ternary (trimSuffix "]" (trimPrefix "optional[" $kind)) $kind $optional -}}
{{- if not (and $optional (has $value (list "" "None"))) -}}
{{- $digits := "[0-9](?:_?[0-9])*" -}}
{{- $ws := "[ \\t\\n\\r\\f\\v]*" -}}
{{- $ok := true -}}
{{- if eq $inner "int" -}}
{{- $ok = regexMatch (printf "^%s[+-]?%s%s$" $ws $digits $ws) $value -}}
{{- else if eq $inner "float" -}}
{{- $ok = regexMatch (printf "^%s[+-]?(?:(?:%s\\.(?:%s)?|\\.%s|%s)(?:[eE][+-]?%s)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN])%s$" $ws $digits $digits $digits $digits $digits $ws) $value -}}
{{- end -}}
{{- if not $ok -}}
{{- include "kvgen.argProblem" (list $w $at (printf "%s takes %s values, got %s" $name $inner (include "kvgen.quoted" $value)) (ternary "a whole number" "a number" (eq $inner "int"))) -}}
{{- else if not (kindIs "invalid" $spec.choices) -}}
{{- $shown := list -}}
{{- $hit := false -}}
{{- range $c := $spec.choices -}}
{{- $text := ternary "None" (toString $c) (kindIs "invalid" $c) -}}
{{- $shown = append $shown $text -}}
{{- if eq $text $value -}}{{- $hit = true -}}{{- end -}}
{{- if and (eq $inner "int") (kindIs "float64" $c) -}}
{{- if eq (float64 (atoi (trim (replace "_" "" $value)))) $c -}}{{- $hit = true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if not $hit -}}
{{- $close := include "kvgen.suggest" (list $value $shown) -}}
{{- include "kvgen.argProblem" (list $w $at (printf "%s: %s is not one of %s" $name (include "kvgen.quoted" $value) (join ", " $shown)) (ternary (printf "did you mean %s?" (include "kvgen.quoted" $close)) "" (ne $close ""))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.unknownOptionHint: the one option that starts with the name (an abbreviation argparse
would take), else kvgen.suggest over the options, else where to look (kvgen.contract _unknown_hint). */}}
{{- define "kvgen.unknownOptionHint" -}}
{{- $name := index . 0 -}}{{- $parser := index . 1 -}}
{{- $shown := list -}}
{{- $prefixed := list -}}
{{- range $o, $spec := $parser.options -}}
{{- if not $spec.hidden -}}
{{- $shown = append $shown $o -}}
{{- if hasPrefix $name $o -}}{{- $prefixed = append $prefixed $o -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $close := "" -}}
{{- if eq (len $prefixed) 1 -}}{{- $close = index $prefixed 0 -}}{{- else -}}{{- $close = include "kvgen.suggest" (list $name $shown) -}}{{- end -}}
{{- if $close -}}{{- printf "did you mean %s?" $close -}}{{- else -}}{{- printf "see `%s --help`" $parser.prog -}}{{- end -}}
{{- end -}}
