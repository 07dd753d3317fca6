# Verifying a linkhooks delivery in Ruby (standard library only).
# Usage: ruby verify.rb <body file> <secret> <X-Service-Signature value>
require "openssl"

# raw_body is the body exactly as received: in Rails, request.raw_post; in Sinatra, request.body.read.
def verify(raw_body, secret, signature)
  return false unless signature.to_s.match?(/\A[0-9a-fA-F]{64}\z/) # no "sha256=" prefix
  expected = OpenSSL::HMAC.hexdigest("SHA256", secret, raw_body)
  OpenSSL.fixed_length_secure_compare(expected, signature.downcase)
end

if $PROGRAM_NAME == __FILE__
  abort "usage: ruby verify.rb <body file> <secret> <X-Service-Signature value>" unless ARGV.length == 3
  body_file, secret, signature = ARGV
  valid = verify(File.binread(body_file), secret, signature)
  puts valid ? "valid" : "invalid"
  exit(valid ? 0 : 1)
end
