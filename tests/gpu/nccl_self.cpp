// NCCL on one GPU, for checking the NCCL profiler plugin where a machine has a single GPU
// (tests/gpu/run.sh). NCCL runs a one-rank collective locally, without a kernel or a profiler event, but
// point-to-point operations to itself are queued, launched as a kernel and profiled like any other: so the
// plugin's task, kernel-channel and completion path runs for real. Prints what it did as "name=count" pairs.
//
//   g++ -O2 -std=c++17 -I/usr/local/cuda/include -o nccl_self nccl_self.cpp -L/usr/local/cuda/lib64 -lcudart
//   -lnccl
// (tests/gpu/pack.sh builds it with the toolkit's NCCL; run.sh runs it with the NCCL that PyTorch ships.)
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kCount = 1 << 22;  // 16 MiB of floats per message
constexpr int kRounds = 5;
constexpr int kAllReduces = 3;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "nccl_self: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    std::fprintf(stderr, "nccl_self: %s: %s\n", what, ncclGetErrorString(r));
    std::exit(1);
  }
}

}  // namespace

int main() {
  int device = 0;
  check(cudaSetDevice(device), "cudaSetDevice");
  ncclComm_t comm = nullptr;
  check(ncclCommInitAll(&comm, 1, &device), "ncclCommInitAll");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  float *sent = nullptr, *received = nullptr;
  check(cudaMalloc(&sent, kCount * sizeof(float)), "cudaMalloc");
  check(cudaMalloc(&received, kCount * sizeof(float)), "cudaMalloc");
  check(cudaMemsetAsync(sent, 0, kCount * sizeof(float), stream), "cudaMemsetAsync");

  for (int i = 0; i < kRounds; ++i) {
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(sent, kCount, ncclFloat, 0, comm, stream), "ncclSend");
    check(ncclRecv(received, kCount, ncclFloat, 0, comm, stream), "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }
  for (int i = 0; i < kAllReduces; ++i)
    check(ncclAllReduce(sent, received, kCount, ncclFloat, ncclSum, comm, stream), "ncclAllReduce");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check(ncclCommDestroy(comm), "ncclCommDestroy");
  check(cudaFree(sent), "cudaFree");
  check(cudaFree(received), "cudaFree");
  int version = 0;
  ncclGetVersion(&version);
  std::printf("nccl_self: nccl=%d sends=%d recvs=%d bytes=%zu allreduces=%d\n", version, kRounds, kRounds,
              kCount * sizeof(float), kAllReduces);
  return 0;
}
