{{/*
kvgen.podTemplate: the pod template shared by the Deployment and the StatefulSets, laid out from
one pod of the context (kvgen.context: workloads[].pod). Scalars are emitted with toJson (JSON is
YAML) and collections with toYaml | nindent (block YAML), so no value can break the document. kvgen's templates/_pod.yaml.j2 is generated from it.
Usage: {{- include "kvgen.podTemplate" $workload.pod | nindent 4 }}
*/}}
{{- define "kvgen.podTemplate" -}}
{{- $pod := . -}}
metadata:
  labels:
    {{- toYaml $pod.labels | nindent 4 }}
  annotations:
    {{- toYaml $pod.annotations | nindent 4 }}
spec:
  {{- if $pod.serviceAccountName }}
  serviceAccountName: {{ toJson $pod.serviceAccountName }}
  {{- end }}
  # vLLM and LMCache never call the Kubernetes API: no token unless pod.serviceAccount.automountToken
  automountServiceAccountToken: {{ toJson $pod.automountServiceAccountToken }}
  # no service links: a Service named vllm would give every container VLLM_PORT=tcp://IP:8000,
  # which vLLM reads as its own port setting and refuses at start (vllm/envs.py get_vllm_port)
  enableServiceLinks: false
  {{- if $pod.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml $pod.imagePullSecrets | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $pod.securityContext | nindent 4 }}
  {{- if $pod.nodeSelector }}
  nodeSelector:
    {{- toYaml $pod.nodeSelector | nindent 4 }}
  {{- end }}
  {{- if $pod.tolerations }}
  tolerations:
    {{- toYaml $pod.tolerations | nindent 4 }}
  {{- end }}
  {{- if $pod.affinity }}
  affinity:
    {{- toYaml $pod.affinity | nindent 4 }}
  {{- end }}
  {{- if $pod.topologySpreadConstraints }}
  topologySpreadConstraints:
    {{- toYaml $pod.topologySpreadConstraints | nindent 4 }}
  {{- end }}
  {{- if $pod.priorityClassName }}
  priorityClassName: {{ toJson $pod.priorityClassName }}
  {{- end }}
  {{- if $pod.runtimeClassName }}
  runtimeClassName: {{ toJson $pod.runtimeClassName }}
  {{- end }}
  {{- if $pod.schedulerName }}
  schedulerName: {{ toJson $pod.schedulerName }}
  {{- end }}
  {{- if hasKey $pod "terminationGracePeriodSeconds" }}
  terminationGracePeriodSeconds: {{ toJson $pod.terminationGracePeriodSeconds }}
  {{- end }}
  {{- if $pod.resourceClaims }}
  # gpuAccess dra: the pod's GPUs, claimed once; vLLM and the LMCache sidecar both list the claim
  resourceClaims:
    {{- toYaml $pod.resourceClaims | nindent 4 }}
  {{- end }}
  {{- if or $pod.download $pod.loraDownloads $pod.sidecar $pod.routingSidecar }}
  initContainers:
  {{- end }}
  {{- if $pod.download }}
    # model.cache: fills the weights' claim once (`hf download` skips the files already there); no deadline
    - name: {{ toJson $pod.download.name }}
      image: {{ toJson $pod.download.image }}
      {{- if $pod.download.imagePullPolicy }}
      imagePullPolicy: {{ toJson $pod.download.imagePullPolicy }}
      {{- end }}
      command:
        {{- toYaml $pod.download.command | nindent 8 }}
      args:
        {{- toYaml $pod.download.args | nindent 8 }}
      {{- if $pod.download.envFrom }}
      envFrom:
        {{- toYaml $pod.download.envFrom | nindent 8 }}
      {{- end }}
      env:
        {{- toYaml $pod.download.env | nindent 8 }}
      resources:
        {{- toYaml $pod.download.resources | nindent 8 }}
      securityContext:
        {{- toYaml $pod.download.securityContext | nindent 8 }}
      terminationMessagePolicy: FallbackToLogsOnError
      volumeMounts:
        {{- toYaml $pod.download.volumeMounts | nindent 8 }}
  {{- end }}
  {{- if $pod.loraDownloads }}
  {{- range $d := $pod.loraDownloads }}
    # model.lora: fills an hf:// adapter's directory on the weights' claim once, after the weights
    - name: {{ toJson $d.name }}
      image: {{ toJson $d.image }}
      {{- if $d.imagePullPolicy }}
      imagePullPolicy: {{ toJson $d.imagePullPolicy }}
      {{- end }}
      command:
        {{- toYaml $d.command | nindent 8 }}
      args:
        {{- toYaml $d.args | nindent 8 }}
      {{- if $d.envFrom }}
      envFrom:
        {{- toYaml $d.envFrom | nindent 8 }}
      {{- end }}
      env:
        {{- toYaml $d.env | nindent 8 }}
      resources:
        {{- toYaml $d.resources | nindent 8 }}
      securityContext:
        {{- toYaml $d.securityContext | nindent 8 }}
      terminationMessagePolicy: FallbackToLogsOnError
      volumeMounts:
        {{- toYaml $d.volumeMounts | nindent 8 }}
  {{- end }}
  {{- end }}
  {{- if $pod.sidecar }}
    # LMCache MP server as a native sidecar: starts (and must answer its health check) before vLLM
    - name: {{ toJson $pod.sidecar.name }}
      image: {{ toJson $pod.sidecar.image }}
      {{- if $pod.sidecar.imagePullPolicy }}
      imagePullPolicy: {{ toJson $pod.sidecar.imagePullPolicy }}
      {{- end }}
      restartPolicy: Always
      command:
        {{- toYaml $pod.sidecar.command | nindent 8 }}
      args:
        {{- toYaml $pod.sidecar.args | nindent 8 }}
      {{- if $pod.sidecar.env }}
      env:
        {{- toYaml $pod.sidecar.env | nindent 8 }}
      {{- end }}
      {{- if $pod.sidecar.ports }}
      ports:
        {{- toYaml $pod.sidecar.ports | nindent 8 }}
      {{- end }}
      resources:
        {{- toYaml $pod.sidecar.resources | nindent 8 }}
      securityContext:
        {{- toYaml $pod.sidecar.securityContext | nindent 8 }}
      # the launcher in probe mode: 200 on the installed LMCache's health path. Startup: up to
      # 5 minutes for the engine to initialise (the pinned L1 pool is allocated then).
      startupProbe:
        exec:
          command:
            {{- toYaml $pod.sidecar.probeCommand | nindent 12 }}
        periodSeconds: 2
        timeoutSeconds: 5
        failureThreshold: 150
      # Liveness: a server that stops answering for about a minute (6 checks 10 s apart, each
      # allowed 5 s) is hung, and the kubelet restarts it. LMCache's health handler only checks
      # that its engine exists ("for k8s liveness/readiness probes"), so a busy server answers.
      livenessProbe:
        exec:
          command:
            {{- toYaml $pod.sidecar.probeCommand | nindent 12 }}
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 6
      volumeMounts:
        {{- toYaml $pod.sidecar.volumeMounts | nindent 8 }}
  {{- end }}
  {{- if $pod.routingSidecar }}
    # a decode server in routing.mode gateway: llm-d's routing sidecar on the pod's API port, in front of vLLM;
    # a request the picker gave a prefill server (its prefill header) is prefilled there first
    - name: {{ toJson $pod.routingSidecar.name }}
      image: {{ toJson $pod.routingSidecar.image }}
      restartPolicy: Always
      command:
        {{- toYaml $pod.routingSidecar.command | nindent 8 }}
      args:
        {{- toYaml $pod.routingSidecar.args | nindent 8 }}
      env:
        {{- toYaml $pod.routingSidecar.env | nindent 8 }}
      ports:
        {{- toYaml $pod.routingSidecar.ports | nindent 8 }}
      resources:
        {{- toYaml $pod.routingSidecar.resources | nindent 8 }}
      securityContext:
        {{- toYaml $pod.routingSidecar.securityContext | nindent 8 }}
      terminationMessagePolicy: FallbackToLogsOnError
      livenessProbe:
        httpGet:
          path: {{ toJson $pod.routingSidecar.probePath }}
          port: routing
        initialDelaySeconds: {{ toJson $pod.routingSidecar.liveness.initialDelaySeconds }}
        periodSeconds: {{ toJson $pod.routingSidecar.liveness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.routingSidecar.liveness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.routingSidecar.liveness.failureThreshold }}
      readinessProbe:
        httpGet:
          path: {{ toJson $pod.routingSidecar.probePath }}
          port: routing
        initialDelaySeconds: {{ toJson $pod.routingSidecar.readiness.initialDelaySeconds }}
        periodSeconds: {{ toJson $pod.routingSidecar.readiness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.routingSidecar.readiness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.routingSidecar.readiness.failureThreshold }}
      volumeMounts:
        {{- toYaml $pod.routingSidecar.volumeMounts | nindent 8 }}
  {{- end }}
  containers:
    - name: {{ toJson $pod.vllm.name }}
      image: {{ toJson $pod.vllm.image }}
      {{- if $pod.vllm.imagePullPolicy }}
      imagePullPolicy: {{ toJson $pod.vllm.imagePullPolicy }}
      {{- end }}
      {{- if $pod.vllm.command }}
      # gpuAccess in-container: kvgen's launcher starts the LMCache server, then `vllm serve`
      command:
        {{- toYaml $pod.vllm.command | nindent 8 }}
      {{- end }}
      args:
        {{- toYaml $pod.vllm.args | nindent 8 }}
      {{- if $pod.vllm.envFrom }}
      envFrom:
        {{- toYaml $pod.vllm.envFrom | nindent 8 }}
      {{- end }}
      {{- if $pod.vllm.env }}
      env:
        {{- toYaml $pod.vllm.env | nindent 8 }}
      {{- end }}
      ports:
        {{- toYaml $pod.vllm.ports | nindent 8 }}
      resources:
        {{- toYaml $pod.vllm.resources | nindent 8 }}
      securityContext:
        {{- toYaml $pod.vllm.securityContext | nindent 8 }}
      {{- if $pod.vllm.probes }}
      startupProbe:
        httpGet:
          path: /health
          port: http
        {{- if hasKey $pod.vllm.probes.startup "initialDelaySeconds" }}
        initialDelaySeconds: {{ toJson $pod.vllm.probes.startup.initialDelaySeconds }}
        {{- end }}
        periodSeconds: {{ toJson $pod.vllm.probes.startup.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.startup.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.startup.failureThreshold }}
      readinessProbe:
        httpGet:
          path: /health
          port: http
        {{- if hasKey $pod.vllm.probes.readiness "initialDelaySeconds" }}
        initialDelaySeconds: {{ toJson $pod.vllm.probes.readiness.initialDelaySeconds }}
        {{- end }}
        periodSeconds: {{ toJson $pod.vllm.probes.readiness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.readiness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.readiness.failureThreshold }}
      livenessProbe:
        httpGet:
          path: /health
          port: http
        {{- if hasKey $pod.vllm.probes.liveness "initialDelaySeconds" }}
        initialDelaySeconds: {{ toJson $pod.vllm.probes.liveness.initialDelaySeconds }}
        {{- end }}
        periodSeconds: {{ toJson $pod.vllm.probes.liveness.periodSeconds }}
        timeoutSeconds: {{ toJson $pod.vllm.probes.liveness.timeoutSeconds }}
        failureThreshold: {{ toJson $pod.vllm.probes.liveness.failureThreshold }}
      {{- end }}
      volumeMounts:
        {{- toYaml $pod.vllm.volumeMounts | nindent 8 }}
  volumes:
    {{- toYaml $pod.volumes | nindent 4 }}
{{- end -}}
