// Who a recorded process is, from the variables its launcher set: the environments below are the ones
// torchrun, srun, Open MPI's mpirun and MPICH's mpiexec give a worker (names from their documentation:
// torchrun's "Environment Variables", Slurm's srun(1) "OUTPUT ENVIRONMENT VARIABLES", Open MPI's mpirun(1)
// and MPICH's Hydra).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <string>

#include "collectors/runtime/collector_runtime.hpp"

namespace meshscope::test {
namespace {

constexpr const char* kLauncherVariables[] = {"MESHSCOPE_RANK",
                                              "MESHSCOPE_LOCAL_RANK",
                                              "MESHSCOPE_WORLD_SIZE",
                                              "RANK",
                                              "LOCAL_RANK",
                                              "WORLD_SIZE",
                                              "OMPI_COMM_WORLD_RANK",
                                              "OMPI_COMM_WORLD_LOCAL_RANK",
                                              "OMPI_COMM_WORLD_SIZE",
                                              "PMI_RANK",
                                              "MPI_LOCALRANKID",
                                              "PMI_SIZE",
                                              "PMIX_RANK",
                                              "PMIX_LOCAL_RANK",
                                              "PMIX_SIZE",
                                              "SLURM_PROCID",
                                              "SLURM_LOCALID",
                                              "SLURM_NTASKS",
                                              "MESHSCOPE_HOSTNAME"};

// Sets exactly VARS among the launcher variables for one test, and puts back what was there.
class LauncherEnvironment {
 public:
  explicit LauncherEnvironment(const std::map<std::string, std::string>& vars) {
    for (const char* name : kLauncherVariables) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      ::unsetenv(name);
    }
    for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~LauncherEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(Identity, TorchrunWorker) {
  LauncherEnvironment env({{"RANK", "13"}, {"LOCAL_RANK", "5"}, {"WORLD_SIZE", "16"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 13);
  EXPECT_EQ(id.local_rank, 5);
  EXPECT_EQ(id.world_size, 16);
  EXPECT_EQ(id.rank_source, "RANK");
  EXPECT_EQ(id.pid, ::getpid());
}

// `srun torchrun --nproc-per-node 8`: one Slurm task per node starts eight workers. Slurm's variables
// describe the task (rank 1 of 2, local id 0); the worker is torchrun's rank 12 of 16, local rank 4.
TEST(Identity, TorchrunInsideSrunTakesEverythingFromTorchrun) {
  LauncherEnvironment env({{"SLURM_PROCID", "1"},
                           {"SLURM_LOCALID", "0"},
                           {"SLURM_NTASKS", "2"},
                           {"RANK", "12"},
                           {"LOCAL_RANK", "4"},
                           {"WORLD_SIZE", "16"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 12);
  EXPECT_EQ(id.local_rank, 4);
  EXPECT_EQ(id.world_size, 16);
  EXPECT_EQ(id.rank_source, "RANK");
}

TEST(Identity, SrunTask) {
  LauncherEnvironment env({{"SLURM_PROCID", "9"}, {"SLURM_LOCALID", "1"}, {"SLURM_NTASKS", "16"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 9);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.world_size, 16);
  EXPECT_EQ(id.rank_source, "SLURM_PROCID");
}

// mpirun inside a Slurm allocation: the batch step's Slurm variables are inherited by every rank (all say
// task 0 of 1), and so is what the batch script exported once on its first node (LOCAL_RANK=$SLURM_LOCALID,
// WORLD_SIZE=$SLURM_NTASKS); Open MPI's variables say who the rank is.
TEST(Identity, OpenMpiInsideASlurmAllocation) {
  LauncherEnvironment env({{"SLURM_PROCID", "0"},
                           {"SLURM_LOCALID", "0"},
                           {"SLURM_NTASKS", "1"},
                           {"LOCAL_RANK", "0"},
                           {"WORLD_SIZE", "1"},
                           {"OMPI_COMM_WORLD_RANK", "6"},
                           {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
                           {"OMPI_COMM_WORLD_SIZE", "8"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 6);
  EXPECT_EQ(id.local_rank, 2);
  EXPECT_EQ(id.world_size, 8);
  EXPECT_EQ(id.rank_source, "OMPI_COMM_WORLD_RANK");
}

// MPICH's Hydra sets PMI_RANK and PMI_SIZE and the local rank as MPI_LOCALRANKID; under srun with PMI-2 only
// the first two may be there, and the local rank then comes from Slurm.
TEST(Identity, MpichUnderSrunBorrowsTheLocalRankFromSlurm) {
  LauncherEnvironment env(
      {{"PMI_RANK", "3"}, {"PMI_SIZE", "4"}, {"SLURM_PROCID", "3"}, {"SLURM_LOCALID", "1"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 3);
  EXPECT_EQ(id.local_rank, 1);
  EXPECT_EQ(id.world_size, 4);
  EXPECT_EQ(id.rank_source, "PMI_RANK");
}

TEST(Identity, ExplicitRankWinsAndHostNameCanBeSet) {
  LauncherEnvironment env({{"MESHSCOPE_RANK", "2"},
                           {"MESHSCOPE_WORLD_SIZE", "3"},
                           {"RANK", "7"},
                           {"LOCAL_RANK", "7"},
                           {"WORLD_SIZE", "8"},
                           {"MESHSCOPE_HOSTNAME", "node-a"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 2);
  EXPECT_EQ(id.world_size, 3);
  EXPECT_EQ(id.local_rank, 7);  // not given explicitly: taken from the launcher that has one
  EXPECT_EQ(id.rank_source, "MESHSCOPE_RANK");
  EXPECT_EQ(id.hostname, "node-a");
}

TEST(Identity, WithoutALauncherTheProcessIsRankZeroOfUnknownSize) {
  LauncherEnvironment env(std::map<std::string, std::string>{{"RANK", "not-a-number"}});
  const record::Identity id = record::identity_from_environment();
  EXPECT_EQ(id.rank, 0);
  EXPECT_EQ(id.rank_source, "default");
  EXPECT_EQ(id.local_rank, kNull);
  EXPECT_EQ(id.world_size, kNull);
  EXPECT_FALSE(id.hostname.empty());
}

}  // namespace
}  // namespace meshscope::test
