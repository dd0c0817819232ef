{{/*
kvgen.checkTensorParallel: vLLM 0.33's checks on the tensor-parallel size (files/tensor-parallel.yaml), a
size one of them refuses stops vLLM before it serves: refused at parallelism.tensor with vLLM's own words,
as kvgen/plan/tensor_parallel.py check does. A geometry field the model row lacks (0) skips its check.
Usage: {{- include "kvgen.checkTensorParallel" $s -}}
*/}}
{{- define "kvgen.checkTensorParallel" -}}
{{- $s := . -}}
{{- $p := $s.V.parallelism -}}
{{- $tp := int64 $p.tensor -}}
{{- if gt $tp 1 -}}
{{- $T := $s.F.Get "files/tensor-parallel.yaml" | fromYaml -}}
{{/* vllm.extraArgs' expert parallelism flags, the last one wins (kvgen/plan/tensor_parallel.py expert_parallel) */}}
{{- $ep := false -}}
{{- range $a := default list $s.V.vllm.extraArgs -}}
{{- $name := replace "_" "-" (first (splitList "=" (toString $a))) -}}
{{- if has $name (list "--enable-expert-parallel" "-ep") -}}{{- $ep = true -}}
{{- else if has $name (list "--disable-expert-parallel" "--no-enable-expert-parallel") -}}{{- $ep = false -}}
{{- end -}}
{{- end -}}
{{- $found := include "kvgen.tensorParallelRefusals" (list $s.model $tp (int64 $p.data) $ep $T) | fromJsonArray -}}
{{- if $found -}}
{{- $ok := list -}}
{{- range $t := untilStep 1 65 1 -}}
{{- if not (include "kvgen.tensorParallelRefusals" (list $s.model (int64 $t) (int64 $p.data) $ep $T) | fromJsonArray) -}}{{- $ok = append $ok (toString $t) -}}{{- end -}}
{{- end -}}
{{- include "kvgen.problem" (list $s "parallelism.tensor" (printf "vLLM %s refuses tensor-parallel size %d for %s: %s" $T.source.version $tp $s.model.id (join " " $found)) (printf "use a tensor-parallel size vLLM accepts for this model (%s), and pipeline parallelism for the rest" (join ", " $ok))) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.tensorParallelRefusals (list model tp data expertParallel table): vLLM's messages for every check tp
fails, in the order vLLM meets them, as a JSON list (kvgen/plan/tensor_parallel.py refusals) */}}
{{- define "kvgen.tensorParallelRefusals" -}}
{{- $m := index . 0 -}}{{- $tp := index . 1 -}}{{- $data := index . 2 -}}{{- $ep := index . 3 -}}
{{- $C := (index . 4).checks -}}
{{- $out := list -}}
{{- $heads := int64 $m.attentionHeads -}}
{{- if and (gt $heads 0) (ne (mod $heads $tp) 0) -}}
{{- $out = append $out (replace "{tp}" (toString $tp) (replace "{heads}" (toString $heads) $C.attentionHeads.message)) -}}
{{- end -}}
{{- $experts := int64 $m.experts -}}
{{- if and (gt $experts 0) (gt $tp $experts) (has $m.architecture $C.expertsAboveTensorParallel.architectures) -}}
{{- $out = append $out (replace "{experts}" (toString $experts) (replace "{tp}" (toString $tp) $C.expertsAboveTensorParallel.message)) -}}
{{- end -}}
{{- $pairs := list -}}
{{- if not $m.mla -}}
{{- $kv := int64 $m.kvHeads -}}
{{- if ge $kv $tp -}}{{- $pairs = append $pairs (list $kv $tp "kvHeads") -}}{{- else -}}{{- $pairs = append $pairs (list $tp $kv "kvHeads") -}}{{- end -}}
{{- end -}}
{{- $vocab := int64 $m.vocabSize -}}
{{- if gt $vocab 0 -}}
{{- $pad := int64 $C.vocab.padding -}}
{{- $pairs = append $pairs (list (mul (div (add $vocab (sub $pad 1)) $pad) $pad) $tp "vocab") -}}
{{- end -}}
{{- $inter := int64 $m.intermediateSize -}}
{{- if gt $inter 0 -}}
{{- if eq $experts 0 -}}{{- $pairs = append $pairs (list $inter $tp "intermediate") -}}
{{- else if not $ep -}}{{- $pairs = append $pairs (list $inter (mul $tp $data) "intermediate") -}}
{{- end -}}
{{- end -}}
{{- range $pair := $pairs -}}
{{- if ne (mod (index $pair 0) (index $pair 1)) 0 -}}
{{- $out = append $out (replace "{denominator}" (toString (index $pair 1)) (replace "{numerator}" (toString (index $pair 0)) (index $C (index $pair 2)).message)) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
