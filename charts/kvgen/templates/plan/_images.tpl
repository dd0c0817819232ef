{{/*
kvgen.images: the image references the context uses, the chart's counterpart of kvgen/plan/images.py.
Sets $s.images: vllm (the vLLM image for the node: GPU, or the CPU build of its architecture),
vllmTag (the label app.kubernetes.io/version), lmcache (the sidecar's image) and lmcacheSet
(images.lmcache names an image of its own).
Usage: {{- include "kvgen.images" $s -}} (after kvgen.plan)
*/}}
{{- define "kvgen.images" -}}
{{- $s := . -}}
{{- $v := $s.V -}}
{{- $rt := $s.rt -}}
{{- $pin := $rt.vllm.image -}}
{{- $label := $pin.tag -}}
{{- $runtime := include "kvgen.runtimePin" $s | fromJson -}}
{{- $image := default dict $v.images.vllm -}}
{{- if eq $s.inst.gpus 0 -}}
{{- $pin = index $rt.vllm.cpuImage $s.inst.arch -}}
{{- $label = $pin.tag -}}
{{- $image = default dict $v.images.vllmCpu -}}
{{- else if eq (toString $s.backend) "lmcache" -}}
{{- $pin = $runtime -}}
{{- end -}}
{{- $own := default dict $v.images.lmcache -}}
{{- $registry := include "kvgen.imageRegistry" $v -}}
{{- $_ := set $s "images" (dict
  "vllm" (include "kvgen.relocate" (list (include "kvgen.image" (list $image $pin)) $registry))
  "vllmTag" (default $label $image.tag)
  "lmcache" (include "kvgen.relocate" (list (include "kvgen.lmcacheImage" (list $own (default dict $v.images.vllm) $runtime)) $registry))
  "lmcacheSet" (not (not (or $own.repository $own.tag $own.digest $own.pullPolicy)))
  "vllmPullPolicy" (default "" $image.pullPolicy)
  "lmcachePullPolicy" (default (default "" (default dict $v.images.vllm).pullPolicy) $own.pullPolicy)) -}}
{{- end -}}

{{/* kvgen.imageRegistry: images.registry, else Helm's global.imageRegistry (the chart's spelling of
the same value, for an umbrella chart), else "". */}}
{{- define "kvgen.imageRegistry" -}}
{{- $v := . -}}
{{- $images := default dict $v.images -}}
{{- if include "kvgen.isSet" (list $images "registry") -}}{{- $images.registry -}}
{{- else if and (kindIs "map" $v.global) (kindIs "string" $v.global.imageRegistry) -}}{{- $v.global.imageRegistry -}}
{{- end -}}
{{- end -}}

{{/* kvgen.relocate: an image reference pulled from a registry (kvgen/plan/images.py relocate): a
first component naming a registry host (holding '.' or ':', or localhost) is replaced, any other
reference (Docker Hub's) is prefixed; unchanged without a registry.
Usage: {{ include "kvgen.relocate" (list $reference $registry) }} */}}
{{- define "kvgen.relocate" -}}
{{- $ref := index . 0 -}}{{- $registry := index . 1 -}}
{{- if $registry -}}
{{- $parts := splitn "/" 2 $ref -}}
{{- if and $parts._1 (or (contains "." $parts._0) (contains ":" $parts._0) (eq $parts._0 "localhost")) -}}
{{- printf "%s/%s" $registry $parts._1 -}}
{{- else -}}
{{- printf "%s/%s" $registry $ref -}}
{{- end -}}
{{- else -}}
{{- $ref -}}
{{- end -}}
{{- end -}}

{{/* kvgen.image: repository:tag, or repository@digest; each field from the values, else the pin. */}}
{{- define "kvgen.image" -}}
{{- $spec := index . 0 -}}{{- $pin := index . 1 -}}
{{- $repo := default $pin.repository $spec.repository -}}
{{- $digest := default (default "" $pin.digest) $spec.digest -}}
{{- if $digest -}}{{- printf "%s@%s" $repo $digest -}}{{- else -}}{{- printf "%s:%s" $repo (default $pin.tag $spec.tag) -}}{{- end -}}
{{- end -}}

{{/* kvgen.lmcacheImage: the sidecar's image: the vLLM image, with the fields images.lmcache sets
in its place (a tag or digest there replaces the vLLM image's tag and digest together). */}}
{{- define "kvgen.lmcacheImage" -}}
{{- $own := index . 0 -}}{{- $spec := index . 1 -}}{{- $pin := index . 2 -}}
{{- $repo := default $pin.repository $spec.repository -}}
{{- $tag := default $pin.tag $spec.tag -}}
{{- $digest := default (default "" $pin.digest) $spec.digest -}}
{{- if or $own.tag $own.digest -}}{{- $tag = default $tag $own.tag -}}{{- $digest = default "" $own.digest -}}{{- end -}}
{{- $repo = default $repo $own.repository -}}
{{- if $digest -}}{{- printf "%s@%s" $repo $digest -}}{{- else -}}{{- printf "%s:%s" $repo $tag -}}{{- end -}}
{{- end -}}

{{/* kvgen.runtimePin: kvgen's runtime image (vLLM's with LMCache built against its torch), tagged with the
kvgen version (the chart's), as JSON: the lmcache backend's default pin (kvgen/plan/images.py runtime_pin).
Usage: {{ include "kvgen.runtimePin" $s | fromJson }} */}}
{{- define "kvgen.runtimePin" -}}
{{- toJson (dict "repository" (.F.Get "files/runtime.yaml" | fromYaml).runtimeImage.repository "tag" .release.version) -}}
{{- end -}}
