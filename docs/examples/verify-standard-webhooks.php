<?php
// Verifying a linkhooks delivery in the Standard Webhooks form, in PHP (standard functions only).
// Usage: php verify-standard-webhooks.php <body file> <secret> <webhook-id> <webhook-timestamp>
//                                         <webhook-signature> [now, Unix seconds]

const LINKHOOKS_TOLERANCE = 300; // seconds either way, as the SDK's default

function linkhooks_verify_standard(
    string $rawBody,
    string $secret,
    string $id,
    string $timestamp,
    string $signature,
    ?int $now = null
): bool {
    // $rawBody = file_get_contents('php://input'); $id = $_SERVER['HTTP_WEBHOOK_ID'] ?? ''; and so on.
    if ($id === '' || $timestamp === '' || $signature === '') {
        return false; // all three headers are required: never fall back to X-Service-Signature
    }
    if (!preg_match('/\A[0-9]{1,12}\z/', $timestamp)
        || abs(($now ?? time()) - (int) $timestamp) > LINKHOOKS_TOLERANCE) {
        return false; // too old (a replay?) or too far ahead: check this server's clock
    }
    $key = base64_decode(preg_replace('/\Awhsec_/', '', $secret), true);
    if ($key === false) {
        return false; // not whsec_ + standard base64: an earlier secret, rotate it
    }
    $expected = base64_encode(hash_hmac('sha256', "$id.$timestamp.$rawBody", $key, true));
    // One "v1,<base64>" entry per valid secret, space-separated, during a rotation.
    foreach (explode(' ', $signature) as $entry) {
        [$version, $value] = array_pad(explode(',', $entry, 2), 2, '');
        if ($version === 'v1' && hash_equals($expected, $value)) {
            return true;
        }
    }
    return false;
}

if (PHP_SAPI === 'cli' && realpath($argv[0]) === __FILE__) {
    if ($argc !== 6 && $argc !== 7) {
        fwrite(STDERR, "usage: php verify-standard-webhooks.php <body file> <secret> <webhook-id> <webhook-timestamp> <webhook-signature> [now]\n");
        exit(2);
    }
    [, $bodyFile, $secret, $id, $timestamp, $signature] = $argv;
    $now = isset($argv[6]) ? (int) $argv[6] : null;
    $valid = linkhooks_verify_standard(file_get_contents($bodyFile), $secret, $id, $timestamp, $signature, $now);
    echo $valid ? "valid\n" : "invalid\n";
    exit($valid ? 0 : 1);
}
