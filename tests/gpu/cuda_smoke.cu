// A small CUDA program whose every activity is known in advance, for checking the CUDA collector on a real
// GPU (tests/gpu/run.sh). It prints what it did as one line of "name=count" pairs; run.sh compares the
// recorded profile with it exactly.
//
//   nvcc -O2 -std=c++17 -I/usr/local/cuda/include -o cuda_smoke cuda_smoke.cu
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kN = 1 << 20;
constexpr int kSteps = 5;
constexpr int kGraphKernels = 3;
constexpr int kGraphReplays = 4;

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale(int n, float a, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_smoke: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main() {
  float* host = nullptr;
  float *x = nullptr, *y = nullptr;
  check(cudaMallocHost(&host, kN * sizeof(float)), "cudaMallocHost");
  check(cudaMalloc(&x, kN * sizeof(float)), "cudaMalloc x");
  check(cudaMalloc(&y, kN * sizeof(float)), "cudaMalloc y");
  for (int i = 0; i < kN; ++i) host[i] = 1.0f;
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaEvent_t done;
  check(cudaEventCreate(&done), "cudaEventCreate");

  const dim3 block(256), grid((kN + 255) / 256);
  int kernels = 0, memcpys = 0, memsets = 0;
  nvtxMarkA("smoke: start");
  for (int step = 0; step < kSteps; ++step) {
    nvtxRangePushA("smoke: step");
    check(cudaMemcpyAsync(x, host, kN * sizeof(float), cudaMemcpyHostToDevice, stream), "H2D");
    check(cudaMemsetAsync(y, 0, kN * sizeof(float), stream), "memset");
    saxpy<<<grid, block, 0, stream>>>(kN, 2.0f, x, y);
    scale<<<grid, block, 0, stream>>>(kN, 0.5f, y);
    check(cudaGetLastError(), "launch");
    check(cudaMemcpyAsync(host, y, kN * sizeof(float), cudaMemcpyDeviceToHost, stream), "D2H");
    check(cudaEventRecord(done, stream), "cudaEventRecord");
    check(cudaEventSynchronize(done), "cudaEventSynchronize");
    nvtxRangePop();
    kernels += 2;
    memcpys += 2;
    memsets += 1;
  }

  // A captured graph of three kernels, replayed: each replay's kernels carry the graph's id.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "begin capture");
  for (int k = 0; k < kGraphKernels; ++k) scale<<<grid, block, 0, stream>>>(kN, 1.0f, y);
  check(cudaStreamEndCapture(stream, &graph), "end capture");
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  nvtxRangePushA("smoke: graphs");
  for (int r = 0; r < kGraphReplays; ++r) check(cudaGraphLaunch(exec, stream), "graph launch");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  nvtxRangePop();
  const int graph_kernels = kGraphKernels * kGraphReplays;

  check(cudaGraphExecDestroy(exec), "exec destroy");
  check(cudaGraphDestroy(graph), "graph destroy");
  check(cudaEventDestroy(done), "event destroy");
  check(cudaStreamDestroy(stream), "stream destroy");
  check(cudaFree(x), "free x");
  check(cudaFree(y), "free y");
  check(cudaFreeHost(host), "free host");
  std::printf("cuda_smoke: kernels=%d graph_kernels=%d memcpys=%d memsets=%d nvtx_ranges=%d nvtx_marks=%d\n",
              kernels + graph_kernels, graph_kernels, memcpys, memsets, kSteps + 1, 1);
  std::fflush(stdout);
  // The collector flushes on cudaDeviceReset: everything above must be in the profile.
  check(cudaDeviceReset(), "cudaDeviceReset");
  return 0;
}
