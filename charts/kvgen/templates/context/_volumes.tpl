{{/* The layout (kvgen.layout, _context.tpl), its pieces: the pod's volumes. Read by kvgen translated (tools/gotemplate.py). */}}
{{/*
kvgen.context.volumes: the pod's volumes: /dev/shm, the model cache, the launcher, the disk tiers.
Sets $s.volumes.
Usage: {{- include "kvgen.context.volumes" $s -}} (after tiers, lmcache)
*/}}
{{- define "kvgen.context.volumes" -}}
{{- $s := . -}}
{{- $volumes := list (dict "name" "dshm" "emptyDir" (dict "medium" "Memory" "sizeLimit" (include "kvgen.formatBytes" $s.plan.sizes.shm))) (dict "name" "model-cache" "emptyDir" (dict "sizeLimit" (include "kvgen.formatBytes" $s.plan.sizes.modelCache))) -}}
{{/* the weights' claim (a claim template's volume is the StatefulSet's volumeClaimTemplates) */}}
{{- with $s.plan.weights.volume -}}{{- $volumes = append $volumes (deepCopy .) -}}{{- end -}}
{{/* model.lora: the pvc:// adapters' claims */}}
{{- with $s.plan.lora -}}{{- range $vol := .volumes -}}{{- $volumes = append $volumes (deepCopy $vol) -}}{{- end -}}{{- end -}}
{{- if $s.lmcache -}}
{{- $volumes = append $volumes (dict "name" $s.W.launcher.volume "configMap" (dict "name" $s.lmcache.launcher.name "defaultMode" (int64 $s.W.launcher.mode))) -}}
{{- end -}}
{{- range $t := $s.tiers -}}{{- $volumes = append $volumes $t.volume -}}{{- end -}}
{{/* the routing sidecar's ServiceAccount token, as the kubelet's own kube-api-access volume has it, mounted in that container only */}}
{{- if $s.routingSidecar -}}
{{- $volumes = append $volumes (dict "name" "routing-sidecar-token" "projected" (dict "defaultMode" 420 "sources" (list (dict "serviceAccountToken" (dict "path" "token" "expirationSeconds" 3607)) (dict "configMap" (dict "name" "kube-root-ca.crt" "items" (list (dict "key" "ca.crt" "path" "ca.crt")))) (dict "downwardAPI" (dict "items" (list (dict "path" "namespace" "fieldRef" (dict "apiVersion" "v1" "fieldPath" "metadata.namespace")))))))) -}}
{{- end -}}
{{- $volumes = concat $volumes (default list (default dict $s.V.pod).volumes) -}}
{{- $_ := set $s "volumes" $volumes -}}
{{- end -}}
