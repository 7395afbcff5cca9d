// Test support: a CA and certificates it signed, made with the openssl command, for TLS tests.
#pragma once

#include <string>

namespace vigil::testing {

// Writes into `dir`: ca.pem (the CA), server.pem/server.key (for 127.0.0.1 and localhost) and
// client.pem/client.key (CN node-1). False when the openssl command failed (its output is in
// dir/openssl.log).
bool MakeTestCertificates(const std::string& dir);

}  // namespace vigil::testing
