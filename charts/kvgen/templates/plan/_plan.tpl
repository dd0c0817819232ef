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
{{/* unknown keys and required values (values.schema.json leaves them to the templates, in kvgen's words) */}}
{{- include "kvgen.checkKeys" $s -}}
{{- range $key := list "model" "instance" -}}
{{- if not (hasKey $s.V $key) -}}{{- include "kvgen.problem" (list $s $key "required key is missing" "") -}}{{- end -}}
{{- end -}}
{{/* a null where values.yaml has a value: Helm deleted the key, and nothing below may read it */}}
{{- $before := len $s.errs -}}
{{- include "kvgen.checkNulledDefaults" $s -}}
{{/* literal credentials first: kvgen reports them with the spec's schema problems, before planning */}}
{{- if eq (len $s.errs) $before -}}{{- include "kvgen.checkCredentials" $s -}}{{- end -}}
{{- if and (hasKey $s.V "model") (hasKey $s.V "instance") (not $s.errs) -}}
{{- include "kvgen.resolveModel" $s -}}
{{- include "kvgen.resolveInstance" $s -}}
{{- include "kvgen.checkApiserver" $s -}}
{{- include "kvgen.checkRemote" $s -}}
{{- include "kvgen.checkExtraObjects" $s -}}
{{- end -}}
{{- if and (hasKey $s "model") (hasKey $s "inst") -}}
{{- $before := len $s.errs -}}
{{- include "kvgen.checkStructure" $s -}}
{{/* the weights' and KV's bytes as vLLM's dtype flags make them (files/quantization.yaml) */}}
{{- if eq (len $s.errs) $before -}}{{- include "kvgen.applyDtypes" $s -}}{{- end -}}
{{- end -}}
{{- if not $s.errs -}}
{{- include "kvgen.decide" $s -}}
{{- include "kvgen.gpuAccess" $s -}}
{{- include "kvgen.checkPorts" $s -}}
{{- include "kvgen.contextLength" $s -}}
{{- include "kvgen.size" $s -}}
{{- include "kvgen.warnings" $s -}}
{{/* strict: every warning is a problem (kvgen/plan/build.py build) */}}
{{- if $s.V.strict -}}
{{- range $w := $s.warnings -}}{{- include "kvgen.problem" (list $s "strict" $w "change the spec so that it no longer warns, or remove strict: true to render with the warning") -}}{{- end -}}
{{- end -}}
{{- end -}}
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
