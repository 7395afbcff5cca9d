// Test support for the API's tests: a fleet service over a SQLite store, on a fake clock, and its
// Api called directly (no HTTP). Each test class says where the database lives (DbFile: a
// temporary directory of its own). Header-only; tests only.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "vigil/core/clock.h"
#include "vigil/core/json.h"
#include "vigil/server/api.h"
#include "vigil/server/service.h"
#include "vigil/store/sqlite_store.h"

namespace vigil::server {

class ApiFixture : public ::testing::Test {
 protected:
  static constexpr char kToken[] = "s3cret";

  void SetUp() override { Open(); }
  // Closed before the test class's members (its directory) go.
  void TearDown() override {
    api_.reset();
    service_.reset();
    store_.reset();
  }
  // The database file. Called from SetUp, once the test class is whole.
  virtual std::string DbFile() const = 0;

  // Opens (again) the store, the service and the API on the same database file.
  void Open() {
    api_.reset();
    service_.reset();
    store_.reset();
    Result<std::unique_ptr<store::Store>> s =
        store::OpenSqliteStore(DbFile(), {.sync_full = false});
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(s).value();
    service_ = std::make_unique<FleetService>(*store_, clock_, learned::LearnOptions{});
    ASSERT_TRUE(service_->Start().ok());
    api_ = std::make_unique<Api>(*service_, ApiOptions{.token = kToken, .max_body = 1 << 20});
  }

  Response Call(const std::string& method, const std::string& path, const std::string& body = "",
                std::map<std::string, std::string> query = {}, bool auth = true) {
    Request r{method, path, std::move(query), auth ? std::string("Bearer ") + kToken : "", body};
    return api_->Handle(r);
  }

  static Json Body(const Response& r) {
    Result<Json> j = ParseJson(r.body, "response");
    EXPECT_TRUE(j.ok()) << r.body;
    return j.ok() ? *j : Json();
  }

  FakeClock clock_{1.8e9};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<FleetService> service_;
  std::unique_ptr<Api> api_;
};

}  // namespace vigil::server
