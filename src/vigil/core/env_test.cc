// The same tests on the machine's Env (in a temporary directory) and on MemEnv: the in-memory
// one is a faithful stand-in only as long as both pass.
#include "vigil/core/env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "vigil/core/mem_env.h"
#include "vigil/testing/temp_dir.h"

namespace vigil {
namespace {

class EnvTest : public ::testing::TestWithParam<bool> {
 protected:
  EnvTest() {
    if (GetParam()) {
      env_ = &mem_;
      root_ = "/work";
      EXPECT_TRUE(mem_.CreateDirectories(root_).ok());
    } else {
      env_ = &Env::Default();
      root_ = dir_.path();
    }
  }
  std::string Path(const std::string& name) const { return root_ + "/" + name; }

  testing::TempDir dir_;
  MemEnv mem_;
  Env* env_ = nullptr;
  std::string root_;
};

INSTANTIATE_TEST_SUITE_P(PosixAndMemory, EnvTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "Memory" : "Posix";
                         });

TEST_P(EnvTest, WrittenFilesReadBackAndStatTheirSize) {
  ASSERT_TRUE(env_->WriteFileAtomic(Path("a.txt"), "hello").ok());
  EXPECT_EQ(*env_->ReadFile(Path("a.txt")), "hello");
  ASSERT_TRUE(env_->WriteFileAtomic(Path("a.txt"), "replaced").ok());
  EXPECT_EQ(*env_->ReadFile(Path("a.txt")), "replaced");
  const FileInfo info = *env_->Stat(Path("a.txt"));
  EXPECT_EQ(info.type, FileType::kRegular);
  EXPECT_EQ(info.size, 8u);
  EXPECT_EQ(env_->Stat(root_)->type, FileType::kDirectory);
}

TEST_P(EnvTest, MissingFilesAndDirectoriesWhereFilesMustBeAreErrorsOfTheirKind) {
  EXPECT_EQ(env_->ReadFile(Path("absent")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->Stat(Path("absent")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->ReadFile(root_).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->WriteFileAtomic(root_, "x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->WriteFileAtomic(Path("no/such/dir/f"), "x").code(), StatusCode::kIoError);
  EXPECT_EQ(env_->AppendToFile(Path("no/such/dir/f"), "x").code(), StatusCode::kIoError);
  EXPECT_EQ(env_->WriteNewFile(Path("no/such/dir/f"), "x").status().code(), StatusCode::kIoError);
}

TEST_P(EnvTest, CheckWritableLeavesNothingBehind) {
  EXPECT_TRUE(env_->CheckWritable(Path("f")).ok());
  EXPECT_EQ(env_->CheckWritable(root_).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->CheckWritable(Path("no/such/dir/f")).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(env_->ListDirectory(root_)->empty());
}

TEST_P(EnvTest, WriteNewFileNeverReplacesAFile) {
  EXPECT_TRUE(*env_->WriteNewFile(Path("spooled.json"), "first"));
  EXPECT_FALSE(*env_->WriteNewFile(Path("spooled.json"), "second"));
  EXPECT_EQ(*env_->ReadFile(Path("spooled.json")), "first");
  // Nothing else is left behind (the machine's stages the file under another name first).
  EXPECT_EQ(*env_->ListDirectory(root_), std::vector<std::string>{"spooled.json"});
}

TEST_P(EnvTest, AppendCreatesThenAppends) {
  ASSERT_TRUE(env_->AppendToFile(Path("log"), "one\n").ok());
  ASSERT_TRUE(env_->AppendToFile(Path("log"), "two\n").ok());
  EXPECT_EQ(*env_->ReadFile(Path("log")), "one\ntwo\n");
}

TEST_P(EnvTest, DirectoriesAreMadeWithTheirParentsAndListedByName) {
  ASSERT_TRUE(env_->CreateDirectories(Path("d/e/f")).ok());
  ASSERT_TRUE(env_->CreateDirectories(Path("d/e")).ok());  // exists: nothing to do
  ASSERT_TRUE(env_->WriteFileAtomic(Path("d/b.json"), "{}").ok());
  ASSERT_TRUE(env_->WriteFileAtomic(Path("d/a.json"), "{}").ok());
  ASSERT_TRUE(env_->WriteFileAtomic(Path("d/e/deeper.json"), "{}").ok());
  EXPECT_EQ(*env_->ListDirectory(Path("d")), (std::vector<std::string>{"a.json", "b.json", "e"}));
  EXPECT_EQ(*env_->ListDirectory(Path("d/e/")), (std::vector<std::string>{"deeper.json", "f"}));
  EXPECT_TRUE(env_->ListDirectory(Path("d/e/f"))->empty());
  EXPECT_EQ(env_->ListDirectory(Path("absent")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->ListDirectory(Path("d/a.json")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env_->CreateDirectories(Path("d/a.json/x")).code(), StatusCode::kInvalidArgument);
}

TEST_P(EnvTest, RemoveAndRename) {
  ASSERT_TRUE(env_->WriteFileAtomic(Path("a"), "A").ok());
  ASSERT_TRUE(env_->WriteFileAtomic(Path("b"), "B").ok());
  ASSERT_TRUE(env_->RenameFile(Path("a"), Path("b")).ok());  // replaces b
  EXPECT_EQ(*env_->ReadFile(Path("b")), "A");
  EXPECT_EQ(env_->ReadFile(Path("a")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->RenameFile(Path("a"), Path("c")).code(), StatusCode::kNotFound);
  ASSERT_TRUE(env_->RemoveFile(Path("b")).ok());
  EXPECT_EQ(env_->RemoveFile(Path("b")).code(), StatusCode::kNotFound);
  EXPECT_EQ(env_->RemoveFile(root_).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(env_->ListDirectory(root_)->empty());
}

TEST(EnvVariablesTest, TheMachinesAreTheProcesssEnvironment) {
  const char* path = std::getenv("PATH");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(Env::Default().GetVariable("PATH"), std::string(path));
  EXPECT_EQ(Env::Default().GetVariable("VIGIL_ENV_TEST_NEVER_SET"), std::nullopt);
}

TEST(EnvVariablesTest, TheTempDirectoryIsTmpdirUnlessItIsUnsetOrEmpty) {
  MemEnv env;
  EXPECT_EQ(env.TempDirectory(), "/tmp");
  env.SetVariable("TMPDIR", "/scratch");
  EXPECT_EQ(env.TempDirectory(), "/scratch");
  env.SetVariable("TMPDIR", "");
  EXPECT_EQ(env.TempDirectory(), "/tmp");
  env.SetVariable("TMPDIR", std::nullopt);
  EXPECT_EQ(env.GetVariable("TMPDIR"), std::nullopt);
}

TEST(MemEnvTest, PathsAreNormalised) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDirectories("/a/b").ok());
  ASSERT_TRUE(env.WriteFileAtomic("a//b/./c.txt", "x").ok());
  EXPECT_EQ(*env.ReadFile("/a/b/c.txt"), "x");
  EXPECT_EQ(*env.ReadFile("/a/b/../b/c.txt"), "x");
}

}  // namespace
}  // namespace vigil
