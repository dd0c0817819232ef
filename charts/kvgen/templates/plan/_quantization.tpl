{{/*
What the weights and the KV cache cost in bytes (kvgen/plan/quantization.py; data in files/quantization.yaml).
*/}}

{{/* kvgen.extraArgAt: {"index", "value"} of the last vllm.extraArgs token naming one of the option names
(--name=value or --name value, underscores read as dashes), {} when none (kvgen/plan/quantization.py arg_at).
Usage: include "kvgen.extraArgAt" (list $v (list "--quantization" "-q")) | fromJson */}}
{{- define "kvgen.extraArgAt" -}}
{{- $args := default list (index . 0).vllm.extraArgs -}}
{{- $names := index . 1 -}}
{{- $found := dict -}}
{{- range $n, $arg := $args -}}
{{- $parts := splitn "=" 2 (toString $arg) -}}
{{- if has ($parts._0 | replace "_" "-") $names -}}
{{- if eq (len $parts) 2 -}}{{- $found = dict "index" $n "value" $parts._1 -}}
{{- else if lt (add $n 1) (len $args) -}}{{- $found = dict "index" $n "value" (toString (index $args (add $n 1))) -}}
{{- else -}}{{- $found = dict "index" $n "value" "" -}}
{{- end -}}
{{/* argparse's short option with its value attached: -qfp8 */}}
{{- else if and (not (hasPrefix "--" (toString $arg))) (gt (len (toString $arg)) 2) (has (substr 0 2 (toString $arg)) $names) -}}
{{- $found = dict "index" $n "value" (substr 2 -1 (toString $arg)) -}}
{{- end -}}
{{- end -}}
{{- toJson $found -}}
{{- end -}}

{{/* kvgen.schemeBytes: bytes of N parameters in a scheme: ceil(N x (weightBits x group + scaleBits) / (8 x group)).
Usage: include "kvgen.schemeBytes" (list $scheme $n) */}}
{{- define "kvgen.schemeBytes" -}}
{{- $q := index . 0 -}}{{- $n := int64 (index . 1) -}}
{{- $group := int64 1 -}}{{- $scale := int64 0 -}}
{{- if include "kvgen.isSet" (list $q "groupSize") -}}{{- $group = int64 $q.groupSize -}}{{- $scale = int64 $q.scaleBits -}}{{- end -}}
{{- $bits := add (mul (int64 $q.weightBits) $group) $scale -}}
{{- $den := mul 8 $group -}}
{{- div (add (mul $n $bits) (sub $den 1)) $den -}}
{{- end -}}

{{/* kvgen.applyDtypes: $s.model's gpuWeights, downloadWeights and kvBytes as vLLM's --quantization, --dtype,
--kv-cache-dtype and --load-format in vllm.extraArgs make them, and a problem for each value kvgen cannot size
(kvgen/plan/quantization.py apply). */}}
{{- define "kvgen.applyDtypes" -}}
{{- $s := . -}}{{- $v := $s.V -}}{{- $m := $s.model -}}
{{- $Q := $s.F.Get "files/quantization.yaml" | fromYaml -}}
{{- if hasKey $Q.schemes $m.quantization -}}
{{- $scheme := index $Q.schemes $m.quantization -}}
{{- $before := len $s.errs -}}
{{- $quant := include "kvgen.extraArgAt" (list $v (list "--quantization" "-q")) | fromJson -}}
{{- if $quant -}}
{{- $where := printf "vllm.extraArgs[%d]" (int $quant.index) -}}
{{- $value := toString $quant.value -}}
{{- $sizable := keys $Q.online | concat (keys $Q.checkpoint) | uniq | sortAlpha -}}
{{- if not (has $value $Q.vllmQuantizationMethods) -}}
{{- include "kvgen.problem" (list $s $where (printf "vLLM 0.33 has no quantization method %s" (include "kvgen.quoted" $value)) (printf "use one kvgen can size: %s; or remove it (vLLM reads a pre-quantized checkpoint's own quantization_config)" (join ", " $sizable))) -}}
{{- else if and $scheme.sixteenBit (hasKey $Q.online $value) -}}
{{- /* sized below; without embeddingParameters unquantized, with a warning (kvgen.quantizationWarnings) */ -}}
{{- else if $scheme.sixteenBit -}}
{{- $message := printf "kvgen cannot size --quantization %s (vLLM 0.33 accepts it; files/quantization.yaml has no bytes for it)" $value -}}
{{- if hasKey $Q.checkpoint $value -}}{{- $message = printf "--quantization %s reads a pre-quantized checkpoint (%s)" $value (join ", " (index $Q.checkpoint $value)) -}}{{- end -}}
{{- include "kvgen.problem" (list $s $where $message (printf "%s is a %s checkpoint: quantize it online with %s, or serve a checkpoint quantized with that method (model.id and model.quantization)" $m.id $m.quantization (join ", " (keys $Q.online | sortAlpha)))) -}}
{{- else if not (has $m.quantization (default list (index $Q.checkpoint $value))) -}}
{{- include "kvgen.problem" (list $s $where (printf "%s is a %s checkpoint; vLLM refuses --quantization %s on it (the checkpoint's quantization_config names its method)" $m.id $m.quantization $value) "remove --quantization (vLLM reads the checkpoint's method)") -}}
{{- end -}}
{{- end -}}
{{- $kv := include "kvgen.extraArgAt" (list $v (list "--kv-cache-dtype")) | fromJson -}}
{{- if and $kv (not (hasKey $Q.kvCacheDtypes (toString $kv.value))) -}}
{{- $message := printf "vLLM 0.33 has no KV-cache dtype %s" (include "kvgen.quoted" (toString $kv.value)) -}}
{{- if has (toString $kv.value) $Q.vllmKvCacheDtypes -}}{{- $message = printf "kvgen cannot size --kv-cache-dtype %s (it packs scales into the KV page)" (toString $kv.value) -}}{{- end -}}
{{- include "kvgen.problem" (list $s (printf "vllm.extraArgs[%d]" (int $kv.index)) $message (printf "use one of %s" (join ", " (keys $Q.kvCacheDtypes | sortAlpha)))) -}}
{{- end -}}
{{- if eq (len $s.errs) $before -}}
{{- $dtype := include "kvgen.extraArgAt" (list $v (list "--dtype")) | fromJson -}}
{{- $dtypeBytes := int64 2 -}}
{{- if and $dtype (hasKey $Q.dtypes (toString $dtype.value)) -}}{{- $dtypeBytes = int64 (index $Q.dtypes (toString $dtype.value)) -}}{{- end -}}
{{- $online := "" -}}
{{- if and $quant $scheme.sixteenBit (hasKey $Q.online (toString $quant.value)) (ge (int64 $m.embeddingParameters) 0) -}}{{- $online = toString $quant.value -}}{{- end -}}
{{- $gpu := int64 $m.weights -}}
{{- if $scheme.sixteenBit -}}
{{- $params := div (int64 $m.weights) 2 -}}
{{- if $online -}}
{{- $emb := min $params (int64 $m.embeddingParameters) -}}
{{- $gpu = add (mul $emb $dtypeBytes) (include "kvgen.schemeBytes" (list (index $Q.schemes (index $Q.online $online)) (sub $params $emb)) | int64) -}}
{{- else -}}
{{- $gpu = mul $params $dtypeBytes -}}
{{- end -}}
{{- end -}}
{{- $kvBytes := $dtypeBytes -}}
{{- if $kv -}}{{- with index $Q.kvCacheDtypes (toString $kv.value) -}}{{- $kvBytes = int64 . -}}{{- end -}}{{- end -}}
{{- $load := include "kvgen.extraArgAt" (list $v (list "--load-format")) | fromJson -}}
{{- $_ := set $m "gpuWeights" $gpu -}}
{{- $_ := set $m "kvBytes" $kvBytes -}}
{{- if and $load (eq (toString $load.value) "dummy") -}}{{- $_ := set $m "downloadWeights" (int64 0) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.quantizationWarnings: the warning of online quantization kvgen sizes unquantized (the model has no
embeddingParameters), a JSON list (kvgen/plan/quantization.py warnings).
Usage: include "kvgen.quantizationWarnings" $s | fromJsonArray */}}
{{- define "kvgen.quantizationWarnings" -}}
{{- $s := . -}}{{- $m := $s.model -}}
{{- $Q := $s.F.Get "files/quantization.yaml" | fromYaml -}}
{{- $out := list -}}
{{- $quant := include "kvgen.extraArgAt" (list $s.V (list "--quantization" "-q")) | fromJson -}}
{{- $scheme := default dict (index $Q.schemes (toString $m.quantization)) -}}
{{- if and $quant $scheme.sixteenBit (hasKey $Q.online (toString $quant.value)) (lt (int64 $m.embeddingParameters) 0) -}}
{{- $out = append $out (printf "vllm.extraArgs[%d]: --quantization %s quantizes %s online; kvgen sizes its GPU weights unquantized, as without the flag (an upper bound), since it does not know how many of its parameters are embeddings and lm_head, which vLLM does not quantize: set model.embeddingParameters (vocab_size x hidden_size, x 2 unless tie_word_embeddings) for the %s size" (int $quant.index) (toString $quant.value) $m.id (index $Q.online (toString $quant.value))) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
