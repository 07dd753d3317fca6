# Verifying a linkhooks delivery in the Standard Webhooks form, in Ruby (standard library only).
# Usage: ruby verify_standard_webhooks.rb <body file> <secret> <webhook-id> <webhook-timestamp>
#                                         <webhook-signature> [now, Unix seconds]
require "openssl"

TOLERANCE = 300 # seconds either way, as the SDK's default

# raw_body is the body exactly as received: in Rails, request.raw_post; in Sinatra, request.body.read.
def verify_standard(raw_body, secret, id, timestamp, signature, now = Time.now.to_i)
  # All three headers are required: never fall back to X-Service-Signature.
  return false if [id, timestamp, signature].any? { |value| value.nil? || value.empty? }
  return false unless timestamp.match?(/\A[0-9]{1,12}\z/)
  return false if (now - timestamp.to_i).abs > TOLERANCE # a replay, or this server's clock is off
  key = secret.delete_prefix("whsec_").unpack1("m0") # strict base64: an earlier secret raises
  signed = "#{id}.#{timestamp}.".b + raw_body.b
  expected = [OpenSSL::HMAC.digest("SHA256", key, signed)].pack("m0")
  # One "v1,<base64>" entry per valid secret, space-separated, during a rotation.
  signature.split(" ").any? do |entry|
    version, value = entry.split(",", 2)
    version == "v1" && !value.nil? && OpenSSL.secure_compare(expected, value)
  end
rescue ArgumentError
  false # not whsec_ + standard base64: an earlier secret, rotate it
end

if $PROGRAM_NAME == __FILE__
  abort "usage: ruby verify_standard_webhooks.rb <body file> <secret> <webhook-id> <webhook-timestamp> <webhook-signature> [now]" unless [5, 6].include?(ARGV.length)
  body_file, secret, id, timestamp, signature, now = ARGV
  args = [File.binread(body_file), secret, id, timestamp, signature]
  args << Integer(now) if now
  valid = verify_standard(*args)
  puts valid ? "valid" : "invalid"
  exit(valid ? 0 : 1)
end
