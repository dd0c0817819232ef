{{/*
Resolving the model and the node, and the structural checks (the chart's counterpart of
kvgen/data/catalog.py resolve_* and kvgen/plan/build.py _check_structure; kvgen.checkCredentials is
the part of kvgen/plan/validate.py parse_spec that values.schema.json cannot do). Each define takes the state
dict built by kvgen.context and records results or problems in it.
*/}}

{{/* kvgen.problem: record one problem. Usage: include "kvgen.problem" (list $s "model.id" "message" "hint") */}}
{{- define "kvgen.problem" -}}
{{- $s := index . 0 -}}
{{- $_ := set $s "errs" (append $s.errs (dict "path" (index . 1) "message" (index . 2) "hint" (index . 3))) -}}
{{- end -}}

{{/* kvgen.isSet: "true" when key is present in the map and not null. */}}
{{- define "kvgen.isSet" -}}
{{- $m := index . 0 -}}{{- $k := index . 1 -}}
{{- if and (kindIs "map" $m) (hasKey $m $k) (not (kindIs "invalid" (index $m $k))) }}true{{ end -}}
{{- end -}}

{{- define "kvgen.resolveModel" -}}
{{- $s := . -}}
{{- $spec := $s.V.model -}}
{{- $catalog := ($s.F.Get "files/models.yaml" | fromYaml).models -}}
{{- $builtin := $catalog -}}
{{/* the values' catalog rows (a file given with -f, or the spec's catalog:) merged over files/models.yaml (kvgen/data/catalog.py merge_rows) */}}
{{- $own := dict -}}{{- with $s.V.catalog -}}{{- with .models -}}{{- $own = . -}}{{- end -}}{{- end -}}
{{/* model.id as its mode reads it (kvgen/data/catalog.py check_model_id): a Hugging Face repo id where the model is
downloaded by it (huggingface_hub 2.4.0 validate_repo_id, its words; catalog.py HF_REPO_ID is this pattern), else a
name (--served-model-name) without whitespace or control characters; nothing else is looked up for an id refused */}}
{{- $mid := toString $spec.id -}}
{{- $mc := include "kvgen.modelCache" $s.V | fromJson -}}
{{- $idWords := "" -}}
{{- if and (not $spec.uri) (or (not $mc.on) $mc.download) -}}
{{- if gt (len (splitList "/" $mid)) 2 -}}{{- $idWords = "Repo id must be in the form 'repo_name' or 'namespace/repo_name'" -}}
{{- else if not (regexMatch "^([A-Za-z0-9_]([-A-Za-z0-9_.]{0,94}[A-Za-z0-9_])?/)?[A-Za-z0-9_]([-A-Za-z0-9_.]{0,94}[A-Za-z0-9_])?$" $mid) -}}{{- $idWords = "Repo id must use alphanumeric chars, '-', '_' or '.'. The name cannot start or end with '-' or '.' and the maximum length is 96" -}}
{{- else if or (contains "--" $mid) (contains ".." $mid) -}}{{- $idWords = "Cannot have -- or .. in repo_id" -}}
{{- else if hasSuffix ".git" $mid -}}{{- $idWords = "Repo_id cannot end by '.git'" -}}
{{- end -}}
{{- if $idWords -}}
{{- include "kvgen.problem" (list $s "model.id" (printf `%s is not a Hugging Face repo id, yet the weights are downloaded from Hugging Face by it: huggingface_hub refuses it ("%s"; validate_repo_id)` (include "kvgen.quoted" $mid) $idWords) "write the model's id on the Hub, e.g. Qwen/Qwen3-8B; weights that are not on the Hub are served from a claim, under any name (model.uri: pvc://CLAIM[/PATH], or model.cache with download: false)") -}}
{{- end -}}
{{- else if regexMatch `[\p{Cc}\p{Z}]` $mid -}}
{{- $idWords = "name" -}}
{{- include "kvgen.problem" (list $s "model.id" (printf "%s holds whitespace or a control character; vLLM serves the model under this name (--served-model-name), which clients send in every request" (include "kvgen.quoted" $mid)) "name the model without whitespace or control characters, e.g. acme/support-llama") -}}
{{- end -}}
{{- if not $idWords -}}
{{/* the values' own rows (kvgen/data/catalog.py check_model_rows): keys without whitespace or control characters,
sizes within kvgen's bound (files/apiserver.yaml maxBytes, the words of kvgen.checkApiserver); refused, no model */}}
{{- $A := $s.F.Get "files/apiserver.yaml" | fromYaml -}}
{{- $rowsRefused := false -}}
{{- range $key := keys $own | sortAlpha -}}
{{- $r := index $own $key -}}
{{- if regexMatch `[\p{Cc}\p{Z}]` $key -}}
{{- $rowsRefused = true -}}
{{- include "kvgen.problem" (list $s (printf "catalog.models.%s" $key) (printf "%s holds whitespace or a control character, which no model id may (model.id names this row by it)" (include "kvgen.quoted" $key)) "key the row by the model's Hugging Face id, e.g. Qwen/Qwen3-8B") -}}
{{- end -}}
{{- range $f := list "weights" -}}
{{- if and (kindIs "map" $r) (include "kvgen.isSet" (list $r $f)) (gt (include "kvgen.bytesF" (index $r $f) | float64) (float64 $A.maxBytes)) -}}
{{- $rowsRefused = true -}}
{{- $x := index $r $f -}}{{- $raw := toString $x -}}{{- if not (kindIs "string" $x) -}}{{- $raw = printf "%.0f" (float64 $x) -}}{{- end -}}
{{- include "kvgen.problem" (list $s (printf "catalog.models.%s.%s" $key $f) (printf "%s is above kvgen's bound of %s for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)" $raw $A.maxBytesText) (printf "use at most %s" $A.maxBytesText)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $own -}}{{- $catalog = merge (deepCopy $own) $catalog -}}{{- end -}}
{{- $row := dict -}}
{{- if hasKey $catalog $spec.id -}}{{- $row = index $catalog $spec.id -}}{{- end -}}
{{- $m := deepCopy $row -}}
{{- if hasKey $own $spec.id -}}{{- $m = mergeOverwrite (deepCopy (default dict (index $builtin $spec.id))) (deepCopy (index $own $spec.id)) -}}{{- end -}}
{{- range $f := list "architecture" "layers" "attentionLayers" "attentionHeads" "kvHeads" "headDim" "experts" "expertsPerToken" "hiddenSize" "intermediateSize" "vocabSize" "mla" "hybrid" "weights" "slidingLayers" "slidingWindow" "multimodal" "quantization" "embeddingParameters" -}}
{{- if include "kvgen.isSet" (list $spec $f) -}}{{- $_ := set $m $f (index $spec $f) -}}{{- end -}}
{{- end -}}
{{- $missing := list -}}
{{- range $f := list "architecture" "layers" "kvHeads" "headDim" "weights" -}}
{{- if not (include "kvgen.isSet" (list $m $f)) -}}{{- $missing = append $missing (printf "model.%s" $f) -}}{{- end -}}
{{- end -}}
{{- if $missing -}}
{{- if hasKey $catalog $spec.id -}}
{{- include "kvgen.problem" (list $s "model.id" (printf "missing %s" (join ", " $missing)) "") -}}
{{- else -}}
{{- $close := include "kvgen.nearTypo" (list $spec.id (keys $catalog)) -}}
{{- include "kvgen.problem" (list $s "model.id" (printf "model %s is not in the catalog and is not described inline (missing %s)" (include "kvgen.quoted" $spec.id) (join ", " $missing)) (printf "%sdescribe it inline (model.architecture, model.layers, model.kvHeads, model.headDim, model.weights; see `kvgen schema`) or under catalog.models in the spec or in a catalog file (kvgen --catalog FILE, helm -f FILE); `kvgen catalog models` lists the models kvgen knows" (ternary (printf "did you mean %s? if not, " (include "kvgen.quoted" $close)) "" (ne $close "")))) -}}
{{- end -}}
{{- else -}}
{{- $layers := int64 $m.layers -}}
{{- $attention := $layers -}}
{{- if include "kvgen.isSet" (list $m "attentionLayers") -}}{{- $attention = int64 $m.attentionLayers -}}{{- end -}}
{{/* hybrid follows the architecture: files/hybrid-architectures.yaml, captured from vLLM (kvgen/data/catalog.py) */}}
{{- $architecture := toString $m.architecture -}}
{{- $hybridArchs := ($s.F.Get "files/hybrid-architectures.yaml" | fromYaml).architectures -}}
{{- $hybridArch := hasKey $hybridArchs $architecture -}}
{{- if and $hybridArch (include "kvgen.isSet" (list $spec "hybrid")) (eq (toString $spec.hybrid) "false") -}}
{{- include "kvgen.problem" (list $s "model.hybrid" (printf "%s is a hybrid architecture (vLLM %s implements IsHybrid); hybrid: false cannot change how vLLM runs it" $architecture (index $hybridArchs $architecture)) "remove model.hybrid (kvgen derives it from the architecture)") -}}
{{- end -}}
{{- $sliding := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "slidingLayers") -}}{{- $sliding = int64 $m.slidingLayers -}}{{- end -}}
{{- $window := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "slidingWindow") -}}{{- $window = int64 $m.slidingWindow -}}{{- end -}}
{{- if gt $sliding $attention -}}
{{- include "kvgen.problem" (list $s "model.slidingLayers" (printf "%d sliding layers are more than the %d attention layers" $sliding $attention) "") -}}
{{- end -}}
{{- if and (gt $sliding 0) (eq $window 0) -}}
{{- include "kvgen.problem" (list $s "model.slidingWindow" "slidingLayers is set but the window is not" "set model.slidingWindow (tokens)") -}}
{{- end -}}
{{- if or (eq $sliding 0) (eq $window 0) -}}{{- $sliding = int64 0 -}}{{- $window = int64 0 -}}{{- end -}}
{{- $fullKvHeads := int64 $m.kvHeads -}}
{{- if include "kvgen.isSet" (list $m "fullKvHeads") -}}{{- $fullKvHeads = int64 $m.fullKvHeads -}}{{- end -}}
{{- $fullHeadDim := int64 $m.headDim -}}
{{- if include "kvgen.isSet" (list $m "fullHeadDim") -}}{{- $fullHeadDim = int64 $m.fullHeadDim -}}{{- end -}}
{{- $maxLen := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "maxModelLen") -}}{{- $maxLen = int64 $m.maxModelLen -}}{{- end -}}
{{- $info := dict "id" $spec.id "architecture" $architecture "layers" $layers "attentionLayers" $attention "kvHeads" (int64 $m.kvHeads) "headDim" (int64 $m.headDim) "mla" (eq (toString $m.mla) "true") "hybrid" (or $hybridArch (eq (toString $m.hybrid) "true")) "weights" (include "kvgen.bytes" $m.weights | int64) "slidingLayers" $sliding "slidingWindow" $window "fullKvHeads" $fullKvHeads "fullHeadDim" $fullHeadDim "maxModelLen" $maxLen "multimodal" (eq (toString $m.multimodal) "true") -}}
{{/* the geometry vLLM's tensor-parallel checks and its profiling run read; 0: not known (a row of your own without it) */}}
{{- range $f := list "attentionHeads" "experts" "expertsPerToken" "hiddenSize" "intermediateSize" "vocabSize" -}}
{{- $_ := set $info $f (ternary (int64 (index $m $f)) (int64 0) (include "kvgen.isSet" (list $m $f) | eq "true")) -}}
{{- end -}}
{{/* the checkpoint's weight format (files/quantization.yaml schemes; kvgen/data/catalog.py resolve_model) */}}
{{- $quant := "bf16" -}}{{- if include "kvgen.isSet" (list $m "quantization") -}}{{- $quant = toString $m.quantization -}}{{- end -}}
{{- $schemes := ($s.F.Get "files/quantization.yaml" | fromYaml).schemes -}}
{{- $_ := set $info "quantization" $quant -}}
{{- $_ := set $info "embeddingParameters" (ternary (int64 $m.embeddingParameters) -1 (include "kvgen.isSet" (list $m "embeddingParameters") | eq "true")) -}}
{{- $_ := set $info "gpuWeights" (int64 $info.weights) -}}{{- $_ := set $info "downloadWeights" (int64 $info.weights) -}}{{- $_ := set $info "kvBytes" (int64 2) -}}
{{- if not (hasKey $schemes $quant) -}}
{{- include "kvgen.problem" (list $s "model.quantization" (printf "unknown checkpoint quantization %s" (include "kvgen.quoted" $quant)) (printf "use one of %s (files/quantization.yaml)" (join ", " (keys $schemes | sortAlpha)))) -}}
{{- end -}}
{{- if not $rowsRefused -}}{{- $_ := set $s "model" $info -}}{{- end -}}
{{- if and (include "kvgen.isSet" (list $spec "maxModelLen")) (include "kvgen.isSet" (list $m "maxModelLen")) -}}
{{- if gt (int64 $spec.maxModelLen) (int64 $m.maxModelLen) -}}
{{- include "kvgen.problem" (list $s "model.maxModelLen" (printf "%d is longer than %s's limit of %d tokens" (int64 $spec.maxModelLen) $spec.id (int64 $m.maxModelLen)) (printf "use at most %d" (int64 $m.maxModelLen))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kvgen.resolveInstance" -}}
{{- $s := . -}}
{{- $spec := $s.V.instance -}}
{{- $catalog := ($s.F.Get "files/instances.yaml" | fromYaml).instances -}}
{{- $builtin := $catalog -}}
{{/* the values' catalog rows merged over files/instances.yaml (kvgen/data/catalog.py merge_rows) */}}
{{- $own := dict -}}{{- with $s.V.catalog -}}{{- with .instances -}}{{- $own = . -}}{{- end -}}{{- end -}}
{{/* the values' own rows (kvgen/data/catalog.py check_instance_rows): the nodeSelector copied into the pod, label keys
and values (ValidatePodSpec: ValidateLabels, the words of scheduling.nodeSelector), and sizes within kvgen's bound
(files/apiserver.yaml maxBytes, the words of kvgen.checkApiserver); refused, no node to plan with */}}
{{- $A := $s.F.Get "files/apiserver.yaml" | fromYaml -}}
{{- $rowsRefused := false -}}
{{- range $key := keys $own | sortAlpha -}}
{{- $r := index $own $key -}}
{{- if kindIs "map" $r -}}
{{- $selector := $r.nodeSelector -}}
{{- if kindIs "map" $selector -}}
{{- range $label := keys $selector | sortAlpha -}}
{{- $at := printf "catalog.instances.%s.nodeSelector.%s" $key $label -}}
{{- if not (include "kvgen.apiFits" (list $A "labelKey" $label)) -}}
{{- $rowsRefused = true -}}
{{- include "kvgen.problem" (list $s $at (printf "%s is not %s (ValidatePodSpec: ValidateLabels)" (include "kvgen.quoted" $label) $A.formats.labelKey.what) "") -}}
{{- end -}}
{{- $value := index $selector $label -}}
{{- if and (kindIs "string" $value) (not (include "kvgen.apiFits" (list $A "labelValue" $value))) -}}
{{- $rowsRefused = true -}}
{{- include "kvgen.problem" (list $s $at (printf "%s is not %s (ValidatePodSpec: ValidateLabels)" (include "kvgen.quoted" $value) $A.formats.labelValue.what) "") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $f := list "gpuMemory" "memory" "localDisk" "ephemeralStorage" -}}
{{- if and (include "kvgen.isSet" (list $r $f)) (gt (include "kvgen.bytesF" (index $r $f) | float64) (float64 $A.maxBytes)) -}}
{{- $rowsRefused = true -}}
{{- $x := index $r $f -}}{{- $raw := toString $x -}}{{- if not (kindIs "string" $x) -}}{{- $raw = printf "%.0f" (float64 $x) -}}{{- end -}}
{{- include "kvgen.problem" (list $s (printf "catalog.instances.%s.%s" $key $f) (printf "%s is above kvgen's bound of %s for any size (sizes near 8 EiB overflow the 64-bit integers Kubernetes and Helm compute with)" $raw $A.maxBytesText) (printf "use at most %s" $A.maxBytesText)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $own -}}{{- $catalog = merge (deepCopy $own) $catalog -}}{{- end -}}
{{- $type := "" -}}
{{- if include "kvgen.isSet" (list $spec "type") -}}{{- $type = toString $spec.type -}}{{- end -}}
{{- $row := dict -}}
{{- if and $type (hasKey $catalog $type) -}}{{- $row = index $catalog $type -}}{{- end -}}
{{- if and $type (hasKey $own $type) -}}{{- $row = mergeOverwrite (deepCopy (default dict (index $builtin $type))) (deepCopy (index $own $type)) -}}{{- end -}}
{{/* a row with a nodeSelector, or cloud: false, is not a cloud instance type: no instance-type pin (kvgen/data/catalog.py resolve_instance: cloud_type) */}}
{{- $cloudType := not (or (and (hasKey $row "cloud") (kindIs "bool" $row.cloud) (not $row.cloud)) (not (empty $row.nodeSelector))) -}}
{{- $m := deepCopy $row -}}
{{- range $f := list "gpus" "gpuModel" "gpuMemory" "memory" "cpu" "arch" "localDisk" "mig" "ephemeralStorage" -}}
{{- if include "kvgen.isSet" (list $spec $f) -}}{{- $_ := set $m $f (index $spec $f) -}}{{- end -}}
{{- end -}}
{{/* a catalog type is one node: instance.gpus cannot make it another; a MIG profile's gpus counts MIG devices (kvgen/data/catalog.py gpus_contradict_type) */}}
{{- $contradicts := false -}}
{{- if and $row (include "kvgen.isSet" (list $spec "gpus")) (include "kvgen.isSet" (list $row "gpus")) (not (include "kvgen.isSet" (list $m "mig"))) (ne (int64 $spec.gpus) (int64 $row.gpus)) -}}
{{- $contradicts = true -}}
{{- $g := int64 $spec.gpus -}}{{- $n := int64 $row.gpus -}}
{{- include "kvgen.problem" (list $s "instance.gpus" (printf "instance.type %s is a node with %d GPUs, but instance.gpus says %d: the pod would be scheduled onto a node with %d GPUs and sized for all of it" (include "kvgen.quoted" $type) $n $g $n) (printf "to use %d of its %d GPUs, leave instance.gpus out and set the parallel sizes to %d GPUs (e.g. parallelism.tensor: %d): the pod then gets %d/%d of the node's memory, CPU and disk; for a node with %d GPUs, describe it without instance.type (instance.gpus, gpuModel, gpuMemory, memory) or add a catalog row" $g $n $g $g $g $n $g)) -}}
{{- end -}}
{{/* a node without a type and without memory is unknown (KServe names none): checks that need it are skipped */}}
{{- $unknownNode := and (not $type) (not (include "kvgen.isSet" (list $m "memory"))) -}}
{{- $missing := list -}}
{{- range $f := list "gpus" "memory" -}}
{{- if and (not (include "kvgen.isSet" (list $m $f))) (not (and $unknownNode (eq $f "memory"))) -}}{{- $missing = append $missing (printf "instance.%s" $f) -}}{{- end -}}
{{- end -}}
{{/* a catalog row's gpuMemory "0" (a CPU type's) is no GPU's memory: missing when the node has GPUs */}}
{{- $noGpuMemory := or (not (include "kvgen.isSet" (list $m "gpuMemory"))) (eq (include "kvgen.bytes" $m.gpuMemory | int64) 0) -}}
{{- if and (include "kvgen.isSet" (list $m "gpus")) (gt (int64 $m.gpus) 0) $noGpuMemory (not (include "kvgen.isSet" (list $m "mig"))) (not $unknownNode) -}}
{{- $missing = append $missing "instance.gpuMemory" -}}
{{- end -}}
{{- if $contradicts -}}{{/* refused above: no instance to plan with */}}
{{- else if $missing -}}
{{- if and $type (not (hasKey $catalog $type)) -}}
{{- $close := include "kvgen.nearTypo" (list $type (keys $catalog)) -}}
{{- include "kvgen.problem" (list $s "instance.type" (printf "unknown instance type %s (missing %s)" (include "kvgen.quoted" $type) (join ", " $missing)) (printf "%sdescribe the node inline (instance.gpus, instance.gpuMemory, instance.memory, instance.cpu, instance.arch, instance.localDisk) or under catalog.instances in the spec or in a catalog file (kvgen --catalog FILE, helm -f FILE); `kvgen catalog instances` lists the types kvgen knows" (ternary (printf "did you mean %s? if not, " (include "kvgen.quoted" $close)) "" (ne $close "")))) -}}
{{- else -}}
{{- include "kvgen.problem" (list $s "instance" (printf "describe the node: missing %s" (join ", " $missing)) "or set instance.type to a catalog type") -}}
{{- end -}}
{{- else -}}
{{- $mig := "" -}}
{{- if include "kvgen.isSet" (list $m "mig") -}}{{- $mig = toString $m.mig -}}{{- end -}}
{{- $gpuMemory := int64 0 -}}
{{- if $mig -}}
{{- $gpuMemory = mul (index (splitList "." $mig) 1 | trimSuffix "+me" | trimSuffix "gb" | int64) 1000000000 -}}
{{- else if include "kvgen.isSet" (list $m "gpuMemory") -}}
{{- $gpuMemory = include "kvgen.bytes" $m.gpuMemory | int64 -}}
{{- end -}}
{{- $cpu := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "cpu") -}}{{- $cpu = int64 $m.cpu -}}{{- end -}}
{{- $disk := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "localDisk") -}}{{- $disk = include "kvgen.bytes" $m.localDisk | int64 -}}{{- end -}}
{{- $arch := "amd64" -}}
{{- if include "kvgen.isSet" (list $m "arch") -}}{{- $arch = toString $m.arch -}}{{- end -}}
{{- $ephemeral := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "ephemeralStorage") -}}{{- $ephemeral = include "kvgen.bytes" $m.ephemeralStorage | int64 -}}{{- end -}}
{{- $gpuModel := "" -}}
{{- if include "kvgen.isSet" (list $m "gpuModel") -}}{{- $gpuModel = toString $m.gpuModel -}}{{- end -}}
{{- $memory := int64 0 -}}
{{- if include "kvgen.isSet" (list $m "memory") -}}{{- $memory = include "kvgen.bytes" $m.memory | int64 -}}{{- end -}}
{{/* a known GPU as the device reports it to CUDA (files/instances.yaml gpuModels; kvgen/data/catalog.py gpu_reported_memory),
the values' own gpuMemory included (a marketed size), unless a MIG profile: what planning multiplies by gpuMemoryUtilization */}}
{{- $gpuUsable := $gpuMemory -}}
{{- $gpuReported := int64 0 -}}
{{- $reported := index (default dict ($s.F.Get "files/instances.yaml" | fromYaml).gpuModels) $gpuModel -}}
{{- if and $reported (not $mig) (gt $gpuMemory 0) -}}
{{- if include "kvgen.isSet" (list $reported "mib") -}}{{- $gpuUsable = mul (int64 $reported.mib) 1048576 -}}
{{- else -}}{{- $gpuUsable = mulf $gpuMemory (float64 $reported.share) | int64 -}}
{{- end -}}
{{- $gpuReported = $gpuUsable -}}
{{- end -}}
{{- if not $rowsRefused -}}
{{- $_ := set $s "inst" (dict "type" $type "gpus" (int64 $m.gpus) "gpuMemory" $gpuMemory "gpuUsable" $gpuUsable "gpuReported" $gpuReported "gpuMemorySet" (include "kvgen.isSet" (list $spec "gpuMemory") | eq "true") "memory" $memory "cpu" $cpu "arch" $arch "localDisk" $disk "mig" $mig "ephemeral" $ephemeral "ephemeralExplicit" (include "kvgen.isSet" (list $spec "ephemeralStorage") | eq "true") "gpuModel" $gpuModel "cloudType" $cloudType "nodeSelector" (deepCopy (default dict $row.nodeSelector))) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.checkStructure: parallelism against the node, multi-node replicas, flags kvgen owns. */}}
{{- define "kvgen.checkStructure" -}}
{{- $s := . -}}
{{- $p := $s.V.parallelism -}}
{{- $i := $s.inst -}}
{{- $total := mul (int64 $p.tensor) (int64 $p.pipeline) (int64 $p.data) -}}
{{- $nodes := int64 $p.nodes -}}
{{- $_ := set $s "gpusPerPod" (int64 0) -}}
{{- if ne (mod $total $nodes) 0 -}}
{{- include "kvgen.problem" (list $s "parallelism.nodes" (printf "tensor x pipeline x data = %d GPUs cannot be split evenly over %d nodes" $total $nodes) "make tensor x pipeline x data a multiple of nodes") -}}
{{- else if eq $i.gpus 0 -}}
{{- if or (gt $total 1) (gt $nodes 1) -}}
{{- include "kvgen.problem" (list $s "parallelism" (printf "%s has no GPU; parallelism must stay at 1" (default "the instance" $i.type)) "") -}}
{{- end -}}
{{- else -}}
{{- $_ := set $s "gpusPerPod" (div $total $nodes) -}}
{{- if gt $s.gpusPerPod $i.gpus -}}
{{- include "kvgen.problem" (list $s "parallelism" (printf "tensor %d x pipeline %d x data %d needs %d GPUs per node, but %s has %d" (int64 $p.tensor) (int64 $p.pipeline) (int64 $p.data) $s.gpusPerPod (default "the instance" $i.type) $i.gpus) "lower the parallel sizes, spread them over more nodes (parallelism.nodes), or pick an instance with more GPUs") -}}
{{- end -}}
{{- end -}}
{{/* vLLM 0.33's divisibility checks (files/tensor-parallel.yaml) */}}
{{- include "kvgen.checkTensorParallel" $s -}}
{{- if and (gt $nodes 1) (ne (int64 $s.V.replicas) 1) (eq $s.V.multiNode.engine "statefulset") -}}
{{- include "kvgen.problem" (list $s "replicas" (printf "a server spanning %d nodes is rendered as one StatefulSet; replicas must be 1" $nodes) "render one spec per server, or set multiNode.engine: leaderworkerset (one group of nodes per replica)") -}}
{{- end -}}
{{- with $s.V.autoscaling -}}
{{- if gt $nodes 1 -}}
{{- include "kvgen.problem" (list $s "autoscaling" (printf "a server spanning %d nodes is one pair of StatefulSets (rank 0 and ranks 1..); kvgen does not autoscale it" $nodes) "leave autoscaling out, or autoscale single-node servers") -}}
{{- end -}}
{{- $min := 1 -}}
{{- if not (kindIs "invalid" .minReplicas) -}}{{- $min = int64 .minReplicas -}}{{- end -}}
{{- if gt (int64 $min) (int64 .maxReplicas) -}}
{{- include "kvgen.problem" (list $s "autoscaling.minReplicas" (printf "%d is above autoscaling.maxReplicas (%d)" (int64 $min) (int64 .maxReplicas)) "") -}}
{{- end -}}
{{- if and .hpa (eq (int64 $min) 0) -}}
{{- include "kvgen.problem" (list $s "autoscaling.minReplicas" "an HPA cannot scale to zero: minReplicas must be at least 1" "use autoscaling.keda to scale to zero") -}}
{{- end -}}
{{- end -}}
{{- include "kvgen.checkModelCache" $s -}}
{{- include "kvgen.checkLora" $s -}}
{{/* flags kvgen owns (files/managed-flags.yaml), and anything vLLM itself would refuse */}}
{{- include "kvgen.checkExtraArgs" $s -}}
{{/* routing: its fields against its mode (docs/routing.md) */}}
{{- include "kvgen.checkRouting" $s -}}
{{- end -}}

{{/*
kvgen.modelCache: model.cache as JSON (kvgen/plan/model_source.py): on, template (a claim per
pod), claim (an existing claim's name), path (its subPath: claim.path, else org--name of the
model id), download (default true).
Usage: {{- $mc := include "kvgen.modelCache" $s.V | fromJson -}}
*/}}
{{- define "kvgen.modelCache" -}}
{{- $c := .model.cache -}}
{{- if kindIs "map" $c -}}
{{- $out := dict "on" true "template" (include "kvgen.isSet" (list $c "claimTemplate") | eq "true") "download" true -}}
{{- if include "kvgen.isSet" (list $c "download") -}}{{- $_ := set $out "download" $c.download -}}{{- end -}}
{{- if include "kvgen.isSet" (list $c "claim") -}}
{{- $path := replace "/" "--" (toString .model.id) -}}
{{- if $c.claim.path -}}{{- $path = trimAll "/" $c.claim.path -}}{{- end -}}
{{- $_ := set $out "claim" $c.claim.name -}}{{- $_ := set $out "path" $path -}}
{{- end -}}
{{- toJson $out -}}
{{- else -}}
{{- toJson (dict "on" false "template" false "download" false) -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.checkModelCache: what no schema can say about model.cache (kvgen/plan/model_source.py check).
Usage: {{- include "kvgen.checkModelCache" $s -}}
*/}}
{{- define "kvgen.checkModelCache" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $mc := include "kvgen.modelCache" $v | fromJson -}}
{{- if $mc.on -}}
{{- if $v.model.uri -}}
{{- include "kvgen.problem" (list $s "model.cache" "model.uri and model.cache both say where the weights are: uri serves a claim that already holds them, cache has kvgen fill one" "keep model.uri for pre-staged files, or replace it with model.cache.claim {name, path} (download: false serves them as they are)") -}}
{{- end -}}
{{- $t := $v.model.cache.claimTemplate -}}
{{- if and $mc.template (include "kvgen.isSet" (list $t "size")) -}}
{{- $size := ternary (toString $t.size) (printf "%d" (int64 $t.size)) (kindIs "string" $t.size) -}}
{{- if lt (include "kvgen.bytes" $t.size | int64) (int64 $s.model.downloadWeights) -}}
{{- include "kvgen.problem" (list $s "model.cache.claimTemplate.size" (printf "%s is below the %.1f GiB the checkpoint of %s downloads: the init container would fill the claim and fail" $size (divf (int64 $s.model.downloadWeights) 1073741824.0) (toString $v.model.id)) "leave size out (kvgen sizes the claim from the checkpoint) or set it above the download") -}}
{{- end -}}
{{- end -}}
{{- if and $mc.template $v.autoscaling -}}
{{- include "kvgen.problem" (list $s "model.cache.claimTemplate" "a claim per pod makes the server a StatefulSet, which kvgen does not autoscale" "leave autoscaling out, or share one ReadWriteMany claim (model.cache.claim) among the replicas") -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
kvgen.checkCredentials: no literal credential in the values (the chart's counterpart of
kvgen/plan/credentials.py; the names and flags are files/credentials.yaml): an env var that carries
one with a literal value, or a credential flag (also with underscores or abbreviated, as vLLM
reads them) in vllm.extraArgs whose value is not a $(NAME) reference.
*/}}
{{- define "kvgen.checkCredentials" -}}
{{- $s := . -}}
{{- $c := $s.F.Get "files/credentials.yaml" | fromYaml -}}
{{- include "kvgen.credentialEnv" (list $s $c "vllm.env" $s.V.vllm.env) -}}
{{- include "kvgen.credentialArgs" (list $s $c "vllm.extraArgs" $s.V.vllm.extraArgs) -}}
{{- include "kvgen.credentialExtraObjects" (list $s $c) -}}
{{- $taken := list -}}
{{- range $e := $s.errs -}}{{- $taken = append $taken $e.path -}}{{- end -}}
{{- include "kvgen.credentialScan" (list $s $c (dict "taken" $taken) "" $s.V) -}}
{{- end -}}

{{/* kvgen.credentialField: the field for the Secret reference when an env var name carries a credential, ""
     otherwise (kvgen/plan/credentials.py env_field). Usage: include "kvgen.credentialField" (list $c NAME) */}}
{{- define "kvgen.credentialField" -}}
{{- $c := index . 0 -}}{{- $upper := upper (index . 1) -}}
{{- $not := $c.env.notCredentials -}}
{{- $stem := trimSuffix "_TOKEN" $upper -}}
{{- if hasKey $c.env.names $upper -}}{{- index $c.env.names $upper -}}
{{- else if has $upper $not.names -}}
{{- else if and (ne $stem $upper) (has (last (splitList "_" $stem)) $not.tokenWords) -}}
{{- else -}}
{{- $field := "" -}}
{{- range $suffix := $c.env.suffixes -}}{{- if hasSuffix $suffix $upper -}}{{- $field = "valueFrom.secretKeyRef" -}}{{- end -}}{{- end -}}
{{- $field -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialEnv: an env list's literal values of credential names (kvgen/plan/credentials.py _env).
     Usage: (list $s $c PATH ENV) */}}
{{- define "kvgen.credentialEnv" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $path := index . 2 -}}{{- $env := index . 3 -}}
{{- if kindIs "slice" $env -}}
{{- range $n, $e := $env -}}
{{- if and (kindIs "map" $e) (kindIs "string" $e.name) $e.value -}}
{{- $field := include "kvgen.credentialField" (list $c $e.name) -}}
{{- if $field -}}
{{- include "kvgen.problem" (list $s (printf "%s[%d].value" $path $n) (printf "%s carries a credential: a literal value would be committed with the spec" $e.name) (include "kvgen.credentialHint" $field)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialArgs: an argument list's credential flags (also with underscores or abbreviated, as vLLM
     reads them, and the dotted form of a dict option, --hf-overrides.token) whose value is not a $(NAME)
     reference (kvgen/plan/credentials.py _args). Usage: (list $s $c PATH ARGS) */}}
{{- define "kvgen.credentialArgs" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $path := index . 2 -}}{{- $args := index . 3 -}}
{{- $pending := "" -}}{{- $pendingField := "" -}}
{{- if kindIs "slice" $args -}}
{{- range $n, $arg := $args -}}
{{- if kindIs "string" $arg -}}
{{- if hasPrefix "-" $arg -}}
{{- $parts := splitn "=" 2 $arg -}}
{{- $name := $parts._0 | replace "_" "-" -}}
{{- $flag := "" -}}{{- $field := "" -}}
{{- if and (hasPrefix "--" $name) (ge (len $name) 3) -}}
{{- range $f, $_ := $c.flags -}}{{- if and (not $flag) (hasPrefix $name $f) -}}{{- $flag = $f -}}{{- $field = index $c.flags $f -}}{{- end -}}{{- end -}}
{{- end -}}
{{- if and (hasPrefix "--" $parts._0) (contains "." $parts._0) -}}
{{- range $k := rest (splitList "." $parts._0) -}}
{{- if has (lower $k | replace "-" "_") $c.jsonKeys -}}{{- $flag = $parts._0 -}}{{- $field = "valueFrom.secretKeyRef" -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- $pending = "" -}}
{{- if and $flag (contains "=" $arg) -}}
{{- if not (regexMatch $c.reference (index $parts "_1")) -}}
{{- include "kvgen.problem" (list $s (printf "%s[%d]" $path $n) (printf "%s takes a credential: a literal value would be committed with the spec" $parts._0) (include "kvgen.credentialHint" $field)) -}}
{{- end -}}
{{- else if $flag -}}{{- $pending = $flag -}}{{- $pendingField = $field -}}
{{- end -}}
{{- else if and $pending (not (regexMatch $c.reference $arg)) -}}
{{- include "kvgen.problem" (list $s (printf "%s[%d]" $path $n) (printf "the value of %s is a credential: a literal value would be committed with the spec" $pending) (include "kvgen.credentialHint" $pendingField)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialExtraObjects: extraObjects (List kinds unwrapped) by the same rules: containers' env and
     args/command, and a ConfigMap's keys (kvgen/plan/credentials.py _extra_objects). */}}
{{- define "kvgen.credentialExtraObjects" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}
{{- range $i, $o := default list $s.V.extraObjects -}}
{{- include "kvgen.credentialObject" (list $s $c (printf "extraObjects[%d]" $i) $o) -}}
{{- end -}}
{{- end -}}

{{- define "kvgen.credentialObject" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $path := index . 2 -}}{{- $o := index . 3 -}}
{{- if kindIs "map" $o -}}
{{- $kind := "" -}}{{- if kindIs "string" $o.kind -}}{{- $kind = lower (trim $o.kind) -}}{{- end -}}
{{- if eq $kind "configmap" -}}
{{- range $section := list "data" "binaryData" -}}
{{- $data := index $o $section -}}
{{- if kindIs "map" $data -}}
{{- range $key := keys $data | sortAlpha -}}
{{- if and (index $data $key) (include "kvgen.credentialField" (list $c $key)) -}}
{{- include "kvgen.problem" (list $s (printf "%s.%s.%s" $path $section $key) (printf "%s carries a credential: a ConfigMap's value is a literal committed with the spec, and envFrom would hand it to a container as that env var" $key) "put it in a Secret created outside kvgen and take it with envFrom.secretRef or valueFrom.secretKeyRef") -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- else if hasSuffix "list" $kind -}}
{{- if kindIs "slice" $o.items -}}
{{- range $j, $item := $o.items -}}{{- include "kvgen.credentialObject" (list $s $c (printf "%s.items[%d]" $path $j) $item) -}}{{- end -}}
{{- end -}}
{{- else -}}
{{- include "kvgen.credentialContainers" (list $s $c $path $o) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialContainers: every env list and args/command list inside a user's object */}}
{{- define "kvgen.credentialContainers" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $path := index . 2 -}}{{- $node := index . 3 -}}
{{- if kindIs "map" $node -}}
{{- range $k := keys $node | sortAlpha -}}
{{- $v := index $node $k -}}
{{- $at := printf "%s.%s" $path $k -}}
{{- if and (eq $k "env") (kindIs "slice" $v) -}}{{- include "kvgen.credentialEnv" (list $s $c $at $v) -}}
{{- else if and (has $k (list "args" "command")) (kindIs "slice" $v) -}}{{- include "kvgen.credentialArgs" (list $s $c $at $v) -}}
{{- else -}}{{- include "kvgen.credentialContainers" (list $s $c $at $v) -}}
{{- end -}}
{{- end -}}
{{- else if kindIs "slice" $node -}}
{{- range $i, $v := $node -}}{{- include "kvgen.credentialContainers" (list $s $c (printf "%s[%d]" $path $i) $v) -}}{{- end -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialScan: every string of the values (map keys at the key's path, and values),
     searched for a credential (kvgen/plan/credentials.py _anywhere). Usage: (list $s $c $st PATH NODE) */}}
{{- define "kvgen.credentialScan" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $st := index . 2 -}}{{- $path := index . 3 -}}{{- $node := index . 4 -}}
{{- if kindIs "map" $node -}}
{{- range $k, $v := $node -}}
{{- $at := ternary $k (printf "%s.%s" $path $k) (eq $path "") -}}
{{- include "kvgen.credentialString" (list $s $c $st $at $k) -}}
{{- include "kvgen.credentialScan" (list $s $c $st $at $v) -}}
{{- end -}}
{{- else if kindIs "slice" $node -}}
{{- range $i, $v := $node -}}{{- include "kvgen.credentialScan" (list $s $c $st (printf "%s[%d]" $path $i) $v) -}}{{- end -}}
{{- else if kindIs "string" $node -}}
{{- include "kvgen.credentialString" (list $s $c $st $path $node) -}}
{{- end -}}
{{- end -}}

{{/* kvgen.credentialString: a well-known token shape in one string, else a JSON key carrying a
     credential (kvgen/plan/credentials.py _in_string); never repeats the value. */}}
{{- define "kvgen.credentialString" -}}
{{- $s := index . 0 -}}{{- $c := index . 1 -}}{{- $st := index . 2 -}}{{- $path := index . 3 -}}{{- $text := index . 4 -}}
{{- if not (or (has $path $st.taken) (has $path $c.ownCheck) (regexMatch $c.reference $text)) -}}
{{- $found := false -}}
{{- range $shape := $c.shapes -}}
{{- if and (not $found) (regexMatch $shape.pattern $text) (or (not $shape.also) (regexMatch (toString $shape.also) $text)) -}}
{{- $found = true -}}
{{- include "kvgen.problem" (list $s $path (printf "holds %s: a literal credential would be committed with the spec" $shape.what) $shape.hint) -}}
{{- end -}}
{{- end -}}
{{- if not $found -}}
{{- range $pair := regexFindAll $c.jsonPair $text -1 -}}
{{/* JSON's \uXXXX escapes decoded ("to\u006ben" is "token"): the key's characters are letters or escapes */}}
{{- $key := (printf "{\"k\": \"%s\"}" (regexReplaceAll $c.jsonPair $pair "${1}") | fromJson).k -}}
{{- $value := regexReplaceAll $c.jsonPair $pair "${2}" -}}
{{- if and (not $found) $value (has (lower $key | replace "-" "_") $c.jsonKeys) (not (regexMatch $c.reference $value)) -}}
{{- $found = true -}}
{{- include "kvgen.problem" (list $s $path (printf "the JSON key %s carries a credential: a literal value would be committed with the spec" (include "kvgen.quoted" $key)) (printf "%s, then write the value as $(NAME) of that env var (Kubernetes expands it in args)" (include "kvgen.credentialHint" "valueFrom.secretKeyRef"))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $found -}}{{- $_ := set $st "taken" (append $st.taken $path) -}}{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kvgen.credentialHint" -}}
{{- if eq . "valueFrom.secretKeyRef" -}}take it from a Secret: valueFrom: {secretKeyRef: {name: SECRET, key: KEY}}
{{- else -}}put it in a Secret and set {{ . }}: {name: SECRET, key: KEY}, or take an env var from it with valueFrom.secretKeyRef
{{- end -}}
{{- end -}}

{{/*
kvgen.modelPvc: model.uri pvc://CLAIM[/PATH] as JSON {claim, path} (path "" when none), as
kvgen/plan/model_source.py model_pvc reads it.
Usage: {{- $pvc := include "kvgen.modelPvc" $values | fromJson -}}
*/}}
{{- define "kvgen.modelPvc" -}}
{{- $parts := splitn "/" 2 (trimPrefix "pvc://" (toString .model.uri)) -}}
{{- toJson (dict "claim" $parts._0 "path" (trimAll "/" (default "" $parts._1))) -}}
{{- end -}}

{{/*
kvgen.modelDir: the directory vLLM serves a local model from (kvgen/plan/model_source.py model_dir):
the weights' mount path, then <org>--<name>[--<revision>] with every character other than a letter,
digit, '.', '_' or '-' made '-'. LMCache keys every cache entry by the path vLLM was started with,
so one path per model and revision keeps models apart in a shared tier.
Usage: {{ include "kvgen.modelDir" $s }} (once, as $s.modelDir, before the context pieces)
*/}}
{{- define "kvgen.modelDir" -}}
{{- $s := . -}}
{{- $slug := replace "/" "--" (toString $s.V.model.id) -}}
{{- $rev := include "kvgen.extraArg" (list $s.V (list "--revision")) -}}
{{- if $rev -}}{{- $slug = printf "%s--%s" $slug $rev -}}{{- end -}}
{{- printf "%s/%s" $s.W.modelPvc.mountPath (regexReplaceAll "[^A-Za-z0-9._-]" $slug "-") -}}
{{- end -}}
