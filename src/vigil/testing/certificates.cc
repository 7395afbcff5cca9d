#include "vigil/testing/certificates.h"

#include <cstdlib>
#include <string>

namespace vigil::testing {

bool MakeTestCertificates(const std::string& dir) {
  const std::string cmd =
      "(cd '" + dir +
      "' && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
      "-subj /CN=test-ca && "
      "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 "
      "&& printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext && "
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem "
      "-days 2 -extfile san.ext && "
      "openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=node-1 && "
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem "
      "-days 2) > '" +
      dir + "/openssl.log' 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace vigil::testing
