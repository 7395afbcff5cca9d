#include "vigil/cluster/rdma.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "vigil/testing/temp_dir.h"

namespace vigil::cluster {
namespace {

void Port(const testing::TempDir& dir, const std::string& device, int port,
          const std::string& state, const std::string& rate = "200 Gb/sec (4X HDR)") {
  const std::string p = "sys/class/infiniband/" + device + "/ports/" + std::to_string(port) + "/";
  dir.Write(p + "state", state + "\n");
  dir.Write(p + "link_layer", "InfiniBand\n");
  dir.Write(p + "rate", rate + "\n");
}

TEST(RdmaPortsTest, EveryPortInNaturalOrderWithItsStateAndRate) {
  testing::TempDir dir;
  Port(dir, "mlx5_10", 1, "4: ACTIVE");
  Port(dir, "mlx5_2", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)");
  Port(dir, "mlx5_1", 1, "1: DOWN");
  Port(dir, "mlx5_0", 1, "4: ACTIVE");
  Port(dir, "mlx5_0", 2, "4: ACTIVE", "garbage");
  dir.Write("sys/class/infiniband/mlx5_0/ports/README", "not a port\n");
  const std::vector<RdmaPort> ports = RdmaPorts(dir.File("sys"));
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_EQ(ports[0].Name(), "mlx5_0");
  EXPECT_EQ(ports[0].state, "ACTIVE");
  EXPECT_TRUE(ports[0].active());
  EXPECT_EQ(ports[0].link_layer, "InfiniBand");
  EXPECT_EQ(ports[0].rate_gbps, 200);
  EXPECT_EQ(ports[1].Name(), "mlx5_0_p2");  // a metric's name holds it
  EXPECT_EQ(ports[1].rate_gbps, 0);
  EXPECT_EQ(ports[2].device, "mlx5_1");  // a down NIC keeps its place: NIC 2 is still NIC 2
  EXPECT_EQ(ports[2].state, "DOWN");
  EXPECT_FALSE(ports[2].active());
  EXPECT_EQ(ports[3].device, "mlx5_2");
  EXPECT_EQ(ports[3].rate_gbps, 400);
  EXPECT_EQ(ports[4].device, "mlx5_10");
  EXPECT_TRUE(RdmaPorts(dir.File("nowhere")).empty());
}

TEST(IbWriteBwTest, ReadsTheAverageInGbitsOrMib) {
  const std::string gbits =
      "                    RDMA_Write BW Test\n"
      " Link type       : IB\n"
      "---------------------------------------------------------------------------------------\n"
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      " 1048576    23790            0.00               1600.12\t\t   0.023789\n"
      "---------------------------------------------------------------------------------------\n";
  EXPECT_DOUBLE_EQ(*ParseIbWriteBw(gbits), 1600.12);
  // perftest 4.5's row: " %-7lu    %-10lu       %-7.2lf            %-7.2lf\t\t   %-7.6lf".
  const std::string mib =
      " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
      " 65536      5000             11782.44            11780.12\t\t   0.188482\n";
  EXPECT_NEAR(*ParseIbWriteBw(mib), 11780.12 * 1048576 * 8 / 1e9, 1e-9);
  EXPECT_EQ(ParseIbWriteBw(" Couldn't connect to 10.0.0.2:18515\n").status().message(),
            "ib_write_bw: no \"BW average\" table in its output");
  EXPECT_FALSE(ParseIbWriteBw(" #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]\n").ok());
  EXPECT_FALSE(ParseIbWriteBw(" BW average[furlongs]\n 1 2 3 4\n").ok());
  EXPECT_FALSE(ParseIbWriteBw(" BW average[Gb/sec]\n 1 2 3 nan\n").ok());
  // Found by fuzz/perftest_fuzz: a figure too large for a double reads as infinity.
  EXPECT_FALSE(
      ParseIbWriteBw("  BW average[MB/sec]   Msps]\n 6552 63   54 2E1780   W a 2\b\n").ok());
}

TEST(IbWriteLatTest, ReadsTheTypicalLatencyOrTheAverageOfATimedRun) {
  // perftest 4.5 over RoCE, with the warning it prints between header and row on a machine whose
  // CPU frequency varies.
  const std::string typical =
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
      "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
      "Conflicting CPU frequency values detected: 2400.000000 != 1873.463000. CPU Frequency is "
      "not max.\n"
      " 2       1000          1.76           6.12         1.79                1.80             "
      "0.06            1.88                    6.12\n"
      "---------------------------------------------------------------------------------------\n";
  EXPECT_DOUBLE_EQ(*ParseIbWriteLat(typical), 1.79);
  // Older perftest: no average column.
  EXPECT_DOUBLE_EQ(*ParseIbWriteLat(" #bytes #iterations    t_min[usec]    t_max[usec]  "
                                    "t_typical[usec]\n 2       1000          2.10   9.00  2.25\n"),
                   2.25);
  // A run timed by -D has only the average.
  EXPECT_DOUBLE_EQ(*ParseIbWriteLat(" #bytes        #iterations       t_avg[usec]    tps average\n"
                                    " 2       412345            2.43          205000.00\n"),
                   2.43);
  EXPECT_EQ(ParseIbWriteLat(" Couldn't connect to 10.0.0.2:18515\n").status().message(),
            "ib_write_lat: no \"t_typical[usec]\" table in its output");
  EXPECT_EQ(ParseIbWriteLat(" #bytes #iterations t_min[usec] t_max[usec] t_typical[usec]\n"
                            " 2 1000 1.0 2.0\n")
                .status()
                .message(),
            "ib_write_lat: a table header without a row of figures");
  EXPECT_EQ(ParseIbWriteLat(" #bytes #iterations t_avg[usec]\n 2 1000 0.00\n").status().message(),
            "ib_write_lat: the latency t_avg[usec] is not a positive number");
  EXPECT_FALSE(ParseIbWriteLat(" #bytes #iterations t_avg[usec]\n 2 1000 inf\n").ok());
}

// A stand-in for ib_write_bw with the arguments rdma.cc gives it: the server (12 arguments) marks
// its TCP port ready, the client (13) cannot connect before that; a device with a "slow-<dev>"
// file reports half the bandwidth.
class FakePerftest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write(
        "ib_write_bw",
        "#!/bin/sh\n"
        "dir=" +
            dir_.path() +
            "\n"
            "dev=$2; tcp=$6\n"
            "if [ $# -eq 12 ]; then\n"
            "  touch $dir/ready-$tcp; sleep 0.2\n"
            "  [ -e $dir/broken-$dev ] && { echo 'ibv_open_device failed' >&2; exit 1; }\n"
            "  exit 0\n"
            "fi\n"
            "[ -e $dir/ready-$tcp ] || { echo \" Couldn't connect to ${13}:$tcp\" >&2; exit 1; }\n"
            "bw=199.54; [ -e $dir/slow-$dev ] && bw=99.77\n"
            "printf ' #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]\\n"
            " 1048576 100 0.00 %s\\t\\t 0.02\\n' $bw\n");
    chmod(dir_.File("ib_write_bw").c_str(), 0755);
    o_.program = dir_.File("ib_write_bw");
    o_.timeout_s = 10;
    o_.seconds = 1;
  }

  std::vector<RdmaNic> Nics(int tcp_base) const {
    return {{0, "mlx5_0", 1, tcp_base}, {1, "mlx5_1", 1, tcp_base + 1}};
  }

  testing::TempDir dir_;
  RdmaOptions o_;
  std::unique_ptr<CommandRunner> runner_ = MakeProcessRunner();
};

TEST_F(FakePerftest, EveryNicIsMeasuredAtOnceAndAClientWaitsForItsServer) {
  dir_.Write("slow-mlx5_1", "");
  std::vector<RdmaFigure> sent;
  std::thread sender([&] { sent = SendRdma("10.0.0.2", Nics(30000), o_, *runner_); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the clients retry meanwhile
  EXPECT_TRUE(ServeRdma(Nics(30000), o_, *runner_).ok());
  sender.join();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].index, 0);
  EXPECT_EQ(sent[0].device, "mlx5_0");
  EXPECT_DOUBLE_EQ(sent[0].gbps, 199.54);
  EXPECT_EQ(sent[0].error, "");
  EXPECT_EQ(sent[1].index, 1);
  EXPECT_DOUBLE_EQ(sent[1].gbps, 99.77);
}

TEST_F(FakePerftest, AServerThatFailsNamesItsDeviceAndAClientWithoutServerGivesUp) {
  dir_.Write("broken-mlx5_1", "");
  const Status served = ServeRdma(Nics(30100), o_, *runner_);
  EXPECT_NE(served.message().find("mlx5_1: "), std::string::npos) << served.message();
  EXPECT_NE(served.message().find("ibv_open_device failed"), std::string::npos);
  o_.timeout_s = 0.5;  // no server ever marks these ready
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RdmaFigure> sent = SendRdma("10.0.0.2", Nics(31000), o_, *runner_);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            RdmaLimitSeconds(o_));
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].gbps, -1);
  EXPECT_NE(sent[0].error.find("Couldn't connect to 10.0.0.2:31000"), std::string::npos)
      << sent[0].error;
}

// A stand-in for ib_write_lat with the arguments rdma.cc gives it: the server (9 arguments) marks
// its TCP port ready; the client (10) fails unless its -n is the 5000 asked for, and reports 1.5
// us, or 6 us on a device with a "slow-<dev>" file.
TEST_F(FakePerftest, LatencyRunsIbWriteLatOnEveryNicAtOnce) {
  dir_.Write(
      "ib_write_lat",
      "#!/bin/sh\n"
      "dir=" +
          dir_.path() +
          "\n"
          "dev=$2; tcp=$6\n"
          "if [ $# -eq 9 ]; then touch $dir/ready-$tcp; sleep 0.2; exit 0; fi\n"
          "[ -e $dir/ready-$tcp ] || { echo \" Couldn't connect to ${10}:$tcp\" >&2; exit 1; }\n"
          "[ \"$8\" = 5000 ] || { echo \"-n $8\" >&2; exit 1; }\n"
          "us=1.50; [ -e $dir/slow-$dev ] && us=6.00\n"
          "echo ' #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec]'\n"
          "echo \" 2 $8 1.00 9.00 $us 1.70\"\n");
  chmod(dir_.File("ib_write_lat").c_str(), 0755);
  o_.test = RdmaTest::kLatency;
  o_.program = dir_.File("ib_write_lat");
  o_.iterations = 5000;
  dir_.Write("slow-mlx5_0", "");
  std::vector<RdmaFigure> sent;
  std::thread sender([&] { sent = SendRdma("10.0.0.2", Nics(32000), o_, *runner_); });
  EXPECT_TRUE(ServeRdma(Nics(32000), o_, *runner_).ok());
  sender.join();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_DOUBLE_EQ(sent[0].us, 6.0) << sent[0].error;
  EXPECT_EQ(sent[0].gbps, -1);
  EXPECT_DOUBLE_EQ(sent[1].us, 1.5) << sent[1].error;
  EXPECT_EQ(sent[1].device, "mlx5_1");
}

}  // namespace
}  // namespace vigil::cluster
