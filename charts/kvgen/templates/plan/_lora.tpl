{{/*
model.lora: the LoRA adapters vLLM 0.33 serves beside the model (the chart's twin of
kvgen/plan/lora.py): where each adapter's files are (files/runtime.yaml wiring.lora), the flags that
load them, what they take (files/sizing.yaml lora) and what no schema can say about them.
*/}}

{{/*
kvgen.loraSized: "true" when kvgen sizes the LoRA buffers of the model $s.model: a dense model with
standard attention and the geometry in its row (kvgen/plan/lora.py sized).
Usage: {{- if include "kvgen.loraSized" $s.model -}}
*/}}
{{- define "kvgen.loraSized" -}}
{{- $m := . -}}
{{- if and (gt (int64 (default 0 $m.hiddenSize)) 0) (gt (int64 (default 0 $m.intermediateSize)) 0) (gt (int64 (default 0 $m.vocabSize)) 0) (gt (int64 (default 0 $m.attentionHeads)) 0) (eq (int64 (default 0 $m.experts)) 0) (not $m.mla) (not $m.hybrid) (eq (int64 $m.fullKvHeads) (int64 $m.kvHeads)) (eq (int64 $m.fullHeadDim) (int64 $m.headDim)) -}}true{{- end -}}
{{- end -}}

{{/*
kvgen.loraLimits: model.lora's --max-loras (default: the number of adapters) and --max-cpu-loras (default:
max-loras), as JSON [maxLoras, maxCpuLoras] (kvgen/plan/lora.py max_loras, max_cpu_loras).
Usage: {{- $limits := include "kvgen.loraLimits" $s.V.model.lora | fromJsonArray -}}
*/}}
{{- define "kvgen.loraLimits" -}}
{{- $l := . -}}
{{- $max := len $l.adapters -}}
{{- if include "kvgen.isSet" (list $l "maxLoras") -}}{{- $max = int64 $l.maxLoras -}}{{- end -}}
{{- $cpu := $max -}}
{{- if include "kvgen.isSet" (list $l "maxCpuLoras") -}}{{- $cpu = int64 $l.maxCpuLoras -}}{{- end -}}
{{- toJson (list (int64 $max) (int64 $cpu)) -}}
{{- end -}}

{{/*
kvgen.loraRank: model.lora.maxRank (default 16, vLLM's). Usage: {{- $r := include "kvgen.loraRank" $l | int64 -}}
*/}}
{{- define "kvgen.loraRank" -}}
{{- if include "kvgen.isSet" (list . "maxRank") -}}{{- int64 .maxRank -}}{{- else -}}16{{- end -}}
{{- end -}}

{{/*
kvgen.loraSources: each distinct uri once, in the adapters' order, as JSON [{uri, scheme, dir, n}] (dir: its
first adapter's name with characters other than letters, digits, '.', '_' and '-' made '-'; n: its index among
the uris of its scheme; kvgen/plan/lora.py sources).
*/}}
{{- define "kvgen.loraSources" -}}
{{- $out := list -}}
{{- $seen := dict -}}
{{- $counts := dict "hf" 0 "pvc" 0 -}}
{{- range $a := .adapters -}}
{{- if not (hasKey $seen $a.uri) -}}
{{- $_ := set $seen $a.uri true -}}
{{- $scheme := (splitn "://" 2 $a.uri)._0 -}}
{{- $out = append $out (dict "uri" $a.uri "scheme" $scheme "dir" (regexReplaceAll "[^A-Za-z0-9._-]" $a.name "-") "n" (int64 (index $counts $scheme))) -}}
{{- $_ := set $counts $scheme (add1 (index $counts $scheme)) -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
kvgen.loraPath: where vLLM reads an adapter (kvgen/plan/lora.py _path): a claim's mount, a directory on the
weights' claim (model.cache), or the repo id vLLM downloads. Usage: include "kvgen.loraPath" (list $s $source)
*/}}
{{- define "kvgen.loraPath" -}}
{{- $s := index . 0 -}}{{- $src := index . 1 -}}
{{- $w := $s.W.lora -}}
{{- if eq $src.scheme "pvc" -}}{{- printf "%s/%s" $w.mountRoot $src.dir -}}
{{- else if kindIs "map" $s.V.model.cache -}}{{- printf "%s/%s/%s" $s.modelDir $w.cacheDir $src.dir -}}
{{- else -}}{{- trimPrefix "hf://" $src.uri -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.loraElements: one adapter at maxRank on every linear module of every layer, unsharded (files/sizing.yaml
lora; kvgen/plan/lora.py _adapter_elements). Usage: include "kvgen.loraElements" (list $l $s.model)
*/}}
{{- define "kvgen.loraElements" -}}
{{- $l := index . 0 -}}{{- $m := index . 1 -}}
{{- $h := int64 $m.hiddenSize -}}{{- $i := int64 $m.intermediateSize -}}
{{- $q := mul (int64 $m.attentionHeads) (int64 $m.headDim) -}}{{- $kv := mul (int64 $m.kvHeads) (int64 $m.headDim) -}}
{{- mul (include "kvgen.loraRank" $l | int64) (int64 $m.layers) (add (mul 7 $h) (mul 2 $q) (mul 2 $kv) (mul 3 $i)) -}}
{{- end -}}

{{/*
kvgen.loraGpuBytes: the stacked A and B buffers on the busiest GPU (the last pipeline stage: its layers and the
lm_head; with one stage the embedding too); "" without model.lora or for a model kvgen does not size
(kvgen/plan/lora.py gpu_bytes). Usage: include "kvgen.loraGpuBytes" (list $s.V $s.model $C)
*/}}
{{- define "kvgen.loraGpuBytes" -}}
{{- $v := index . 0 -}}{{- $m := index . 1 -}}{{- $C := index . 2 -}}
{{- $l := $v.model.lora -}}
{{- if and (kindIs "map" $l) (include "kvgen.loraSized" $m) -}}
{{- $t := int64 $v.parallelism.tensor -}}{{- $pp := int64 $v.parallelism.pipeline -}}
{{- $h := int64 $m.hiddenSize -}}{{- $i := int64 $m.intermediateSize -}}{{- $vocab := int64 $m.vocabSize -}}
{{- $q := mul (int64 $m.attentionHeads) (int64 $m.headDim) -}}
{{- $kvRank := mul (max 1 (div (int64 $m.kvHeads) $t)) (int64 $m.headDim) -}}
{{- $layer := add (mul 7 $h) (mul 2 (div $q $t)) (mul 2 $kvRank) (mul 3 (div $i $t)) -}}
{{- $edges := mul (add $vocab $h) (ternary 2 1 (eq $pp 1)) -}}
{{- $limits := include "kvgen.loraLimits" $l | fromJsonArray -}}
{{- mul (index $limits 0 | int64) (include "kvgen.loraRank" $l | int64) (int64 $C.lora.bufferBytesPerElement) (add (mul (div (add (int64 $m.layers) (sub $pp 1)) $pp) $layer) $edges) -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.loraHostBytes: maxCpuLoras adapters in each of $workers workers' host memory; 0 without model.lora or for
a model kvgen does not size (kvgen/plan/lora.py host_bytes). Usage: include "kvgen.loraHostBytes" (list $v $m $C $workers)
*/}}
{{- define "kvgen.loraHostBytes" -}}
{{- $v := index . 0 -}}{{- $m := index . 1 -}}{{- $C := index . 2 -}}{{- $workers := index . 3 | int64 -}}
{{- $l := $v.model.lora -}}
{{- if and (kindIs "map" $l) (include "kvgen.loraSized" $m) -}}
{{- $limits := include "kvgen.loraLimits" $l | fromJsonArray -}}
{{- mul $workers (index $limits 1 | int64) (include "kvgen.loraElements" (list $l $m) | int64) (int64 $C.lora.bufferBytesPerElement) -}}
{{- else -}}0{{- end -}}
{{- end -}}

{{/*
kvgen.loraDownloadBytes: what the hf:// adapters download (each distinct one once, saved in float32); 0 for a
model kvgen does not size (kvgen/plan/lora.py download_bytes). Usage: include "kvgen.loraDownloadBytes" (list $v $m $C)
*/}}
{{- define "kvgen.loraDownloadBytes" -}}
{{- $v := index . 0 -}}{{- $m := index . 1 -}}{{- $C := index . 2 -}}
{{- $l := $v.model.lora -}}
{{- if and (kindIs "map" $l) (include "kvgen.loraSized" $m) -}}
{{- $hf := 0 -}}
{{- range $src := include "kvgen.loraSources" $l | fromJsonArray -}}{{- if eq $src.scheme "hf" -}}{{- $hf = add1 $hf -}}{{- end -}}{{- end -}}
{{- mul (int64 $hf) (include "kvgen.loraElements" (list $l $m) | int64) (int64 $C.lora.savedBytesPerElement) -}}
{{- else -}}0{{- end -}}
{{- end -}}

{{/*
kvgen.planLora: model.lora as the layout reads it, the plan document's lora (kvgen/plan/build.py _lora_doc):
the flags (every limit written out, every adapter in one --lora-modules as a JSON object), the pvc:// adapters'
volumes and read-only mounts, model.cache's download of each hf:// adapter, the GPU buffers and the host cache.
Usage: {{- $doc := include "kvgen.planLora" $s | fromJson -}} (after $s.modelDir, $s.model, $s.gpusPerPod)
*/}}
{{- define "kvgen.planLora" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $l := $v.model.lora -}}
{{- $w := $s.W.lora -}}
{{- $limits := include "kvgen.loraLimits" $l | fromJsonArray -}}
{{- $paths := dict -}}
{{- $volumes := list -}}{{- $mounts := list -}}{{- $downloads := list -}}
{{- $fills := and (kindIs "map" $v.model.cache) (ne (toString (default dict $v.model.cache).download) "false") -}}
{{- range $src := include "kvgen.loraSources" $l | fromJsonArray -}}
{{- $path := include "kvgen.loraPath" (list $s $src) -}}
{{- $_ := set $paths $src.uri $path -}}
{{- $name := printf "%s%d" $w.volumePrefix (int64 $src.n) -}}
{{- if eq $src.scheme "pvc" -}}
{{- $rest := splitn "/" 2 (trimPrefix "pvc://" $src.uri) -}}
{{- $volumes = append $volumes (dict "name" $name "persistentVolumeClaim" (dict "claimName" $rest._0 "readOnly" true)) -}}
{{- $m := dict "name" $name "mountPath" $path "readOnly" true -}}
{{- with trimAll "/" (default "" $rest._1) -}}{{- $_ := set $m "subPath" . -}}{{- end -}}
{{- $mounts = append $mounts $m -}}
{{- else if $fills -}}
{{- $args := list (trimPrefix "hf://" $src.uri) (printf "--local-dir=%s" $path) -}}
{{- range $p := $w.include -}}{{- $args = append $args (printf "--include=%s" $p) -}}{{- end -}}
{{- $downloads = append $downloads (dict "name" (printf "%s%d" $w.downloadContainer (int64 $src.n)) "args" $args) -}}
{{- end -}}
{{- end -}}
{{- $args := list "--enable-lora" (printf "--max-lora-rank=%d" (include "kvgen.loraRank" $l | int64)) (printf "--max-loras=%d" (index $limits 0 | int64)) (printf "--max-cpu-loras=%d" (index $limits 1 | int64)) "--lora-modules" -}}
{{- range $a := $l.adapters -}}{{- $args = append $args (toJson (dict "name" $a.name "path" (index $paths $a.uri))) -}}{{- end -}}
{{- $doc := dict "args" $args "volumes" $volumes "mounts" $mounts "downloads" $downloads "hostBytes" (include "kvgen.loraHostBytes" (list $v $s.model $s.C (max 1 (int64 $s.gpusPerPod))) | int64) -}}
{{- with include "kvgen.loraGpuBytes" (list $v $s.model $s.C) -}}{{- $_ := set $doc "gpuBytes" (int64 .) -}}{{- end -}}
{{- toJson $doc -}}
{{- end -}}

{{/*
kvgen.checkLora: what no schema can say about model.lora (kvgen/plan/lora.py check).
Usage: {{- include "kvgen.checkLora" $s -}}
*/}}
{{- define "kvgen.checkLora" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $l := $v.model.lora -}}
{{- if kindIs "map" $l -}}
{{- $seen := dict -}}{{- $dirs := dict -}}{{- $dirName := dict -}}
{{- range $n, $a := $l.adapters -}}
{{- $path := printf "model.lora.adapters[%d].name" $n -}}
{{- if eq (toString $a.name) (toString $v.model.id) -}}
{{- include "kvgen.problem" (list $s $path (printf "%s is the model's own id: a request for it would reach the base model" (include "kvgen.quoted" $a.name)) "name the adapter apart from model.id") -}}
{{- end -}}
{{- if hasKey $seen $a.name -}}
{{- include "kvgen.problem" (list $s $path (printf "%s names adapters[%d] too; vLLM refuses a second adapter under one name" (include "kvgen.quoted" $a.name) (int64 (index $seen $a.name))) "give each adapter its own name") -}}
{{- else -}}
{{- $_ := set $seen $a.name $n -}}
{{- $d := regexReplaceAll "[^A-Za-z0-9._-]" $a.name "-" -}}
{{- if and (hasKey $dirs $d) (ne (index $dirs $d) $a.uri) -}}
{{- include "kvgen.problem" (list $s $path (printf "%s and %s both become the directory %s (%s/%s), with other uris" (include "kvgen.quoted" $a.name) (include "kvgen.quoted" (index $dirName $d)) $d ($s.F.Get "files/runtime.yaml" | fromYaml).wiring.lora.mountRoot $d) "rename one (characters other than letters, digits, '.', '_' and '-' become '-')") -}}
{{- end -}}
{{- if not (hasKey $dirs $d) -}}{{- $_ := set $dirs $d $a.uri -}}{{- $_ := set $dirName $d $a.name -}}{{- end -}}
{{- if and (hasPrefix "hf://" $a.uri) $v.model.uri -}}
{{- include "kvgen.problem" (list $s (printf "model.lora.adapters[%d].uri" $n) (printf "%s is downloaded from Hugging Face, and model.uri serves the model offline (HF_HUB_OFFLINE=1): vLLM could not fetch it" (include "kvgen.quoted" $a.uri)) "put the adapter's files on a claim and use pvc://CLAIM/PATH") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $limits := include "kvgen.loraLimits" $l | fromJsonArray -}}
{{- if and (include "kvgen.isSet" (list $l "maxCpuLoras")) (lt (int64 $l.maxCpuLoras) (index $limits 0 | int64)) -}}
{{- include "kvgen.problem" (list $s "model.lora.maxCpuLoras" (printf "%d is below maxLoras (%d); vLLM 0.33 refuses it (max_cpu_loras must be >= max_loras: vllm/config/lora.py)" (int64 $l.maxCpuLoras) (index $limits 0 | int64)) (printf "raise it to at least %d, or leave it out" (index $limits 0 | int64))) -}}
{{- end -}}
{{- $flagged := dict -}}
{{- range $a := default list $v.vllm.extraArgs -}}
{{- $f := replace "_" "-" (splitn "=" 2 (toString $a))._0 -}}
{{- if has $f (list "--enable-lora" "--no-enable-lora" "--disable-lora" "--max-lora-rank" "--max-loras" "--max-cpu-loras" "--lora-modules") -}}{{- $_ := set $flagged $f true -}}{{- end -}}
{{- end -}}
{{- range $f := keys $flagged | sortAlpha -}}
{{- include "kvgen.problem" (list $s "vllm.extraArgs" (printf "%s is set by kvgen from model.lora" $f) "remove it from vllm.extraArgs; model.lora writes the LoRA flags") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.loraWarnings: LoRA whose memory kvgen cannot size (kvgen/plan/lora.py warnings), as a JSON list.
Usage: {{- $out = concat $out (include "kvgen.loraWarnings" $s | fromJsonArray) -}}
*/}}
{{- define "kvgen.loraWarnings" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $out := list -}}
{{- $set := kindIs "map" $v.model.lora -}}
{{- if and $set (not (include "kvgen.loraSized" $s.model)) -}}
{{- $out = append $out (printf "model.lora: kvgen does not size the LoRA buffers of %s (only dense models with standard attention and hiddenSize, intermediateSize, vocabSize and attentionHeads in their row): vLLM takes them from the KV cache at start, and the host cache and downloads are not counted" (toString $v.model.id)) -}}
{{- end -}}
{{- $enabled := false -}}
{{- range $a := default list $v.vllm.extraArgs -}}{{- if eq (replace "_" "-" (splitn "=" 2 (toString $a))._0) "--enable-lora" -}}{{- $enabled = true -}}{{- end -}}{{- end -}}
{{- if and (not $set) $enabled -}}
{{- $out = append $out "vllm.extraArgs --enable-lora: the LoRA buffers vLLM preallocates (out of the KV cache) and the adapters in host memory are not sized; set model.lora (adapters, maxRank, maxLoras) instead" -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}
