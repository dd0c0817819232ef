{{/*
kvgen.podTemplate: the pod template shared by the Deployment and the StatefulSets (the
counterpart of kvgen's templates/_pod.yaml.j2). Values are emitted with toJson (JSON is
YAML), so no value can break the document.
Usage: {{ include "kvgen.podTemplate" (list $c $workload.pod) | nindent 4 }}
*/}}
{{- define "kvgen.podTemplate" -}}
{{- $c := index . 0 -}}
{{- $pod := index . 1 -}}
metadata:
  labels: {{ toJson $pod.labels }}
  annotations: {{ toJson $pod.annotations }}
spec:
  {{- if $c.nodeSelector }}
  nodeSelector: {{ toJson $c.nodeSelector }}
  {{- end }}
  {{- if $c.tolerations }}
  tolerations: {{ toJson $c.tolerations }}
  {{- end }}
  {{- if $c.affinity }}
  affinity: {{ toJson $c.affinity }}
  {{- end }}
  {{- if $c.priorityClassName }}
  priorityClassName: {{ toJson $c.priorityClassName }}
  {{- end }}
  {{- if $pod.resourceClaims }}
  # gpuAccess dra: the pod's GPUs, claimed once; vLLM and the LMCache sidecar both list the claim
  resourceClaims: {{ toJson $pod.resourceClaims }}
  {{- end }}
  {{- with $pod.sidecar }}
  initContainers:
    # LMCache MP server as a native sidecar: starts (and must answer its health check) before vLLM
    - name: {{ toJson .name }}
      image: {{ toJson .image }}
      restartPolicy: Always
      command: {{ toJson .command }}
      args: {{ toJson .args }}
      {{- if .env }}
      env: {{ toJson .env }}
      {{- end }}
      resources: {{ toJson .resources }}
      startupProbe:
        exec:
          command: {{ toJson .probeCommand }}
        periodSeconds: 2
        timeoutSeconds: 3
        failureThreshold: 150
      volumeMounts: {{ toJson .volumeMounts }}
  {{- end }}
  containers:
    - name: {{ toJson $pod.vllm.name }}
      image: {{ toJson $pod.vllm.image }}
      {{- if $pod.vllm.command }}
      # gpuAccess in-container: kvgen's launcher starts the LMCache server, then `vllm serve`
      command: {{ toJson $pod.vllm.command }}
      {{- end }}
      args: {{ toJson $pod.vllm.args }}
      {{- if $pod.vllm.env }}
      env: {{ toJson $pod.vllm.env }}
      {{- end }}
      ports: {{ toJson $pod.vllm.ports }}
      resources: {{ toJson $pod.vllm.resources }}
      {{- if $pod.vllm.probes }}
      startupProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 10
        failureThreshold: 180
      readinessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 5
        failureThreshold: 3
      livenessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: 10
        failureThreshold: 3
      {{- end }}
      volumeMounts: {{ toJson $pod.vllm.volumeMounts }}
  volumes: {{ toJson $pod.volumes }}
{{- end -}}
