{{/*
kvgen.plan: resolve the model and the node, check the values, apply the rules and size the pod:
the chart's counterpart of kvgen/plan/build.py build. Takes the state dict (V: .Values, F: .Files, errs,
kube: the Kubernetes version) and records in it model, inst, gpusPerPod, decision, backend,
gpuAccess, context (the context length) and size: the fields of kvgen/plan/types.py Plan. When the values cannot be served, $s.errs
lists every problem, and in templates/validate.yaml ($s.failHere) it fails with all of them.
Usage: {{- include "kvgen.plan" $s -}}
*/}}
{{- define "kvgen.plan" -}}
{{- $s := . -}}
{{/* unknown keys and required values (values.schema.json leaves them to the templates, in kvgen's words).
     Planning goes on past an unknown key (nothing reads it: every problem in one run, as kvgen's
     without_refused), not past a missing or nulled value or a written credential */}}
{{- $named := sub (len $s.errs) $s.kubeProblems -}}
{{- include "kvgen.checkKeys" $s -}}
{{/* model.config names a file beside a spec: kvgen render reads it, a chart cannot (kvgen/input/model_config.py) */}}
{{- if and (kindIs "map" $s.V.model) (include "kvgen.isSet" (list $s.V.model "config")) -}}
{{- include "kvgen.problem" (list $s "model.config" "the Helm chart cannot read a file: model.config is for kvgen render, which reads it beside the spec" (printf "run `kvgen catalog import %s --id %s > row.yaml`, pass the row with -f row.yaml and leave model.config out" (toString $s.V.model.config) (toString (default "MODEL_ID" $s.V.model.id)))) -}}
{{- end -}}
{{- $keys := len $s.errs -}}
{{- range $key := list "model" "instance" -}}
{{- if not (hasKey $s.V $key) -}}{{- include "kvgen.problem" (list $s $key "required key is missing" "") -}}{{- end -}}
{{- end -}}
{{/* a null where values.yaml has a value: Helm deleted the key, and nothing below may read it */}}
{{- $before := len $s.errs -}}
{{- include "kvgen.checkNulledDefaults" $s -}}
{{/* literal credentials first: kvgen reports them with the spec's schema problems, before planning */}}
{{- if eq (len $s.errs) $before -}}{{- include "kvgen.checkCredentials" $s -}}{{- end -}}
{{- $planning := and (eq $named 0) (eq (len $s.errs) $keys) (not $s.stopped) -}}
{{- $schemaProblems := len $s.errs -}}
{{- if $planning -}}
{{- include "kvgen.resolveModel" $s -}}
{{- include "kvgen.resolveInstance" $s -}}
{{- include "kvgen.checkApiserver" $s -}}
{{- include "kvgen.checkRemote" $s -}}
{{- include "kvgen.checkExtraObjects" $s -}}
{{- end -}}
{{- if and $planning (not (and (hasKey $s "model") (hasKey $s "inst"))) -}}
{{/* what needs neither the model nor the node is checked still: every problem in one run */}}
{{- include "kvgen.checkExtraArgs" $s -}}
{{- include "kvgen.checkRouting" $s -}}
{{- end -}}
{{- if and (hasKey $s "model") (hasKey $s "inst") -}}
{{- $before := len $s.errs -}}
{{- include "kvgen.checkStructure" $s -}}
{{/* sizing goes on past the problems above, unless it would size what is wrong: GPUs that do not
     divide (parallelism), or bytes whose dtype flags it cannot read (kvgen/plan/build.py build) */}}
{{- $divides := true -}}
{{- range $i, $e := $s.errs -}}
{{- if and (ge $i $before) (or (eq $e.path "parallelism") (hasPrefix "parallelism." $e.path)) -}}{{- $divides = false -}}{{- end -}}
{{- end -}}
{{- if $divides -}}
{{- $said := list -}}{{- range $e := $s.errs -}}{{- $said = append $said $e.path -}}{{- end -}}
{{- $errs := $s.errs -}}
{{- $_ := set $s "errs" list -}}
{{/* the weights' and KV's bytes as vLLM's dtype flags make them (files/quantization.yaml); a flag
     vLLM refuses is reported once, at its index, by kvgen.checkExtraArgs */}}
{{- include "kvgen.applyDtypes" $s -}}
{{- $dtype := $s.errs -}}
{{- $_ := set $s "errs" $errs -}}
{{- range $e := $dtype -}}{{- if not (has $e.path $said) -}}{{- $_ := set $s "errs" (append $s.errs $e) -}}{{- end -}}{{- end -}}
{{- if not $dtype -}}{{- $_ := set $s "sizable" true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if $s.sizable -}}
{{- $before := len $s.errs -}}
{{- include "kvgen.decide" $s -}}
{{- include "kvgen.gpuAccess" $s -}}
{{- include "kvgen.checkPorts" $s -}}
{{- $sizing := len $s.errs -}}
{{- include "kvgen.contextLength" $s -}}
{{- include "kvgen.size" $s -}}
{{/* a size or length refused above is not sized again: what sizing finds there is its consequence */}}
{{- $refused := list -}}{{- range $i, $e := $s.errs -}}{{- if lt $i $before -}}{{- $refused = append $refused $e.path -}}{{- end -}}{{- end -}}
{{- include "kvgen.dropRelated" (list $s $sizing $refused) -}}
{{- include "kvgen.warnings" $s -}}
{{/* strict: every warning is a problem, where the spec has no other than that its pod does not fit (kvgen/plan/build.py build) */}}
{{- if and $s.V.strict (eq $before 0) -}}
{{- range $w := $s.warnings -}}{{- include "kvgen.problem" (list $s "strict" $w "change the spec so that it no longer warns, or remove strict: true to render with the warning") -}}{{- end -}}
{{- end -}}
{{- end -}}
{{/* a problem planning finds at (or under, or above) a value the checks left out is the default's, not
     the user's (kvgen/app/compiler.py _planning_past) */}}
{{- include "kvgen.dropRelated" (list $s $schemaProblems $s.refused) -}}
{{- include "kvgen.checkRelease" $s -}}
{{- include "kvgen.failOnProblems" $s -}}
{{- end -}}

{{/* kvgen.checkNulledDefaults: a key the values set to null where the chart's values.yaml has a value
(files/values-defaults.json). Helm deletes such a key while merging the values (chartutil's coalescing),
so the chart would render without the default; kvgen refuses the null in the same words
(kvgen/plan/validate.py nulled_defaults). The key is missing from .Values, which no other values can
make it. */}}
{{- define "kvgen.checkNulledDefaults" -}}
{{- $s := . -}}
{{- include "kvgen.nulledDefaultsIn" (list $s "" $s.V ($s.F.Get "files/values-defaults.json" | fromJson)) -}}
{{- end -}}

{{/* kvgen.nulledDefaultsIn: kvgen.checkNulledDefaults below PREFIX. Usage: (list $s PREFIX VALUES TREE) */}}
{{- define "kvgen.nulledDefaultsIn" -}}
{{- $s := index . 0 -}}{{- $prefix := index . 1 -}}{{- $values := index . 2 -}}{{- $tree := index . 3 -}}
{{- range $key, $sub := $tree -}}
{{- $path := ternary $key (printf "%s.%s" $prefix $key) (eq $prefix "") -}}
{{- if not (hasKey $values $key) -}}
{{- include "kvgen.problem" (list $s $path "null removes the default: Helm deletes a key set to null where the chart's values.yaml has one, and the chart would render without it" (printf "leave %s out for its default, or give it a value" $path)) -}}
{{- else if and $sub (kindIs "map" (index $values $key)) -}}
{{- include "kvgen.nulledDefaultsIn" (list $s $path (index $values $key) $sub) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.failOnProblems: in templates/validate.yaml ($s.failHere), fail listing every problem in $s.errs */}}
{{- define "kvgen.failOnProblems" -}}
{{- $s := . -}}
{{- if and $s.errs $s.failHere -}}
{{- $lines := list (printf "kvgen: %d problem(s) in the values; nothing was rendered:" (len $s.errs)) -}}
{{- range $e := $s.errs -}}
{{- $line := printf "  %s: %s" $e.path $e.message -}}
{{- if $e.hint -}}{{- $line = printf "%s (hint: %s)" $line $e.hint -}}{{- end -}}
{{- $lines = append $lines $line -}}
{{- end -}}
{{- fail (join "\n" $lines) -}}
{{/* reached only in `helm lint`, whose lint mode logs a fail at INFO and renders on (Helm's engine): an
     error of the template engine itself fails the lint, with the problems in its text. The bare chart
     (no model, no instance: `helm lint charts/kvgen`) is linted as before */}}
{{- if or (hasKey $s.V "model") (hasKey $s.V "instance") -}}
{{- include (join "\n" $lines) $s -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.withServer: gpuAccess in-container: the vLLM container's size plus the LMCache server's
(kvgen/plan/types.py with_server); its CPU is the vLLM container's. */}}
{{- define "kvgen.withServer" -}}
{{- $a := index . 0 -}}{{- $b := index . 1 -}}
{{- $out := dict "cpu" $a.cpu "memory" (add (int64 $a.memory) (int64 $b.memory)) "limit" (add (int64 $a.limit) (int64 $b.limit)) "ephemeral" (add (int64 $a.ephemeral) (int64 $b.ephemeral)) -}}
{{- if hasKey $a "cpuLimit" -}}{{- $_ := set $out "cpuLimit" $a.cpuLimit -}}{{- end -}}
{{- if or (hasKey $a "ephemeralLimit") (hasKey $b "ephemeralLimit") -}}
{{- $_ := set $out "ephemeralLimit" (add (int64 (ternary $a.ephemeralLimit $a.ephemeral (hasKey $a "ephemeralLimit"))) (int64 (ternary $b.ephemeralLimit $b.ephemeral (hasKey $b "ephemeralLimit")))) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* kvgen.dropRelated: drop the problems from index FROM on whose path is related to one of PATHS
(kvgen.related): a later stage's problem at a refused path is the refusal's consequence.
Usage: {{- include "kvgen.dropRelated" (list $s FROM PATHS) -}} */}}
{{- define "kvgen.dropRelated" -}}
{{- $s := index . 0 -}}{{- $from := index . 1 -}}{{- $paths := index . 2 -}}
{{- if $paths -}}
{{- $kept := list -}}
{{- range $i, $e := $s.errs -}}
{{- if or (lt $i $from) (not (include "kvgen.related" (list $e.path $paths))) -}}{{- $kept = append $kept $e -}}{{- end -}}
{{- end -}}
{{- $_ := set $s "errs" $kept -}}
{{- end -}}
{{- end -}}

{{/* kvgen.related: "true" when PATH is one of PATHS, or above or below one (kvgen/plan/build.py related).
Usage: {{ include "kvgen.related" (list PATH PATHS) }} */}}
{{- define "kvgen.related" -}}
{{- $path := index . 0 -}}
{{- range $p := index . 1 -}}
{{- if or (eq $p $path) (hasPrefix (printf "%s." $p) $path) (hasPrefix (printf "%s[" $p) $path) (hasPrefix (printf "%s." $path) $p) (hasPrefix (printf "%s[" $path) $p) -}}true{{- end -}}
{{- end -}}
{{- end -}}
