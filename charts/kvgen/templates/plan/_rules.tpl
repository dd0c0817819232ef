{{/*
kvgen.decide: the capability rules of files/rules.yaml (codes, order, conditions, reasons),
interpreted as kvgen/plan/rules.py decide does: every rule is checked (decision.rules: code, matched), and
the first that matches switches offloading off and gives the reason; a rule never fails the render.
*/}}
{{- define "kvgen.decide" -}}
{{- $s := . -}}
{{- $facts := dict "spec" $s.V "model" $s.model "instance" $s.inst "vllm" (dict "lora" (or (kindIs "map" $s.V.model.lora) (eq (include "kvgen.loraEnabled" $s.V) "true"))) -}}
{{- $decision := dict "enabled" true "code" "" "reason" "" -}}
{{- $checked := list -}}
{{- range $rule := ($s.F.Get "files/rules.yaml" | fromYaml).rules -}}
{{- $matched := not (not (include "kvgen.holds" (list $rule.when $facts))) -}}
{{- $checked = append $checked (dict "code" $rule.code "matched" $matched) -}}
{{- if and $decision.enabled $matched -}}
{{- $_ := set $decision "enabled" false -}}
{{- $_ := set $decision "code" $rule.code -}}
{{- $_ := set $decision "reason" $rule.reason -}}
{{- end -}}
{{- end -}}
{{- $_ := set $decision "rules" $checked -}}
{{- $_ := set $s "decision" $decision -}}
{{- $backend := "" -}}
{{- if $decision.enabled -}}{{- $backend = $s.V.kvCacheOffloading.backend -}}{{- end -}}
{{- $_ := set $s "backend" $backend -}}
{{- end -}}

{{/* kvgen.loraEnabled: "true" when vllm.extraArgs switch LoRA on: the last of --enable-lora, --no-enable-lora and
     --disable-lora, underscores read as dashes (kvgen/plan/rules.py lora_enabled). Usage: include "kvgen.loraEnabled" $s.V */}}
{{- define "kvgen.loraEnabled" -}}
{{- $on := false -}}
{{- range $token := default list .vllm.extraArgs -}}
{{- $name := (splitn "=" 2 (toString $token))._0 | replace "_" "-" -}}
{{- if eq $name "--enable-lora" -}}{{- $on = true -}}{{- else if has $name (list "--no-enable-lora" "--disable-lora") -}}{{- $on = false -}}{{- end -}}
{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}

{{/* kvgen.holds: "true" when a condition of the tables holds (rules.holds): all/any/not of
     {field, op, value}, field a dotted path whose first name is a fact. Usage: include "kvgen.holds" (list $when $facts) */}}
{{- define "kvgen.holds" -}}
{{- $w := index . 0 -}}{{- $facts := index . 1 -}}
{{- if hasKey $w "all" -}}
{{- $ok := true -}}{{- range $c := $w.all -}}{{- if not (include "kvgen.holds" (list $c $facts)) -}}{{- $ok = false -}}{{- end -}}{{- end -}}
{{- if $ok }}true{{ end -}}
{{- else if hasKey $w "any" -}}
{{- $ok := false -}}{{- range $c := $w.any -}}{{- if include "kvgen.holds" (list $c $facts) -}}{{- $ok = true -}}{{- end -}}{{- end -}}
{{- if $ok }}true{{ end -}}
{{- else if hasKey $w "not" -}}
{{- if not (include "kvgen.holds" (list $w.not $facts)) }}true{{ end -}}
{{- else -}}
{{- $x := $facts -}}
{{- range $k := splitList "." $w.field -}}{{- if kindIs "map" $x -}}{{- $x = index $x $k -}}{{- else -}}{{- $x = index dict "unset" -}}{{- end -}}{{- end -}}
{{- $num := or (kindIs "int" $x) (kindIs "int64" $x) (kindIs "float64" $x) -}}
{{- $want := $w.value -}}
{{- if eq $w.op "is" -}}
{{- if eq (not (not $x)) $want }}true{{ end -}}
{{- else if or (eq $w.op "eq") (eq $w.op "ne") -}}
{{- $same := false -}}
{{- if kindIs "string" $want -}}{{- $same = and (kindIs "string" $x) (eq (toString $x) $want) -}}
{{- else if $num -}}{{- $same = eq (float64 $x) (float64 $want) -}}
{{- end -}}
{{- if eq $same (eq $w.op "eq") }}true{{ end -}}
{{- else if eq $w.op "gt" -}}
{{- if and $num (gt (float64 $x) (float64 $want)) }}true{{ end -}}
{{- else if eq $w.op "lt" -}}
{{- if and $num (lt (float64 $x) (float64 $want)) }}true{{ end -}}
{{- else -}}
{{- fail (printf "kvgen chart: unknown op %q in a condition of files/*.yaml" $w.op) -}}
{{- end -}}
{{- end -}}
{{- end -}}
