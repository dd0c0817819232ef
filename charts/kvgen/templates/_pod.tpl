{{/*
kvgen.podTemplate: the pod template shared by the Deployment and the StatefulSets, laid out from
one pod of the context (kvgen.context: workloads[].pod). Values are emitted with toJson (JSON is
YAML), so no value can break the document. kvgen's templates/_pod.yaml.j2 is generated from it.
Usage: {{- include "kvgen.podTemplate" $workload.pod | nindent 4 }}
*/}}
{{- define "kvgen.podTemplate" -}}
{{- $pod := . -}}
metadata:
  labels: {{ toJson $pod.labels }}
  annotations: {{ toJson $pod.annotations }}
spec:
  {{- if $pod.nodeSelector }}
  nodeSelector: {{ toJson $pod.nodeSelector }}
  {{- end }}
  {{- if $pod.tolerations }}
  tolerations: {{ toJson $pod.tolerations }}
  {{- end }}
  {{- if $pod.affinity }}
  affinity: {{ toJson $pod.affinity }}
  {{- end }}
  {{- if $pod.priorityClassName }}
  priorityClassName: {{ toJson $pod.priorityClassName }}
  {{- end }}
  {{- if $pod.resourceClaims }}
  # gpuAccess dra: the pod's GPUs, claimed once; vLLM and the LMCache sidecar both list the claim
  resourceClaims: {{ toJson $pod.resourceClaims }}
  {{- end }}
  {{- if $pod.sidecar }}
  initContainers:
    # LMCache MP server as a native sidecar: starts (and must answer its health check) before vLLM
    - name: {{ toJson $pod.sidecar.name }}
      image: {{ toJson $pod.sidecar.image }}
      restartPolicy: Always
      command: {{ toJson $pod.sidecar.command }}
      args: {{ toJson $pod.sidecar.args }}
      {{- if $pod.sidecar.env }}
      env: {{ toJson $pod.sidecar.env }}
      {{- end }}
      {{- if $pod.sidecar.ports }}
      ports: {{ toJson $pod.sidecar.ports }}
      {{- end }}
      resources: {{ toJson $pod.sidecar.resources }}
      startupProbe:
        exec:
          command: {{ toJson $pod.sidecar.probeCommand }}
        periodSeconds: 2
        timeoutSeconds: 3
        failureThreshold: 150
      volumeMounts: {{ toJson $pod.sidecar.volumeMounts }}
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
        periodSeconds: {{ toJson $pod.vllm.probes.startup.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.startup.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.startup.failureThreshold }}
      readinessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: {{ toJson $pod.vllm.probes.readiness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.readiness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.readiness.failureThreshold }}
      livenessProbe:
        httpGet: {path: /health, port: http}
        periodSeconds: {{ toJson $pod.vllm.probes.liveness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.liveness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.liveness.failureThreshold }}
      {{- end }}
      volumeMounts: {{ toJson $pod.vllm.volumeMounts }}
  volumes: {{ toJson $pod.volumes }}
{{- end -}}
