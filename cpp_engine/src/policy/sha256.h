// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits. Used for
// the stable hash of a KernelIdentity (the Python engine uses hashlib).
// No Python twin (a twin-less helper): the Python engine uses hashlib.sha256.
#pragma once

#include <string>

namespace cpe::policy {

std::string sha256_hex(const std::string &data);

}  // namespace cpe::policy
