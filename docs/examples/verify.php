<?php
// Verifying a linkhooks delivery in PHP (no extension beyond the standard hash functions).
// Usage: php verify.php <body file> <secret> <X-Service-Signature value>

function linkhooks_verify(string $rawBody, string $secret, string $signature): bool
{
    // $rawBody = file_get_contents('php://input'); never json_decode + json_encode it first.
    if (!preg_match('/\A[0-9a-fA-F]{64}\z/', $signature)) {
        return false; // 64 hex digits, no "sha256=" prefix
    }
    $expected = hash_hmac('sha256', $rawBody, $secret);
    return hash_equals($expected, strtolower($signature));
}

if (PHP_SAPI === 'cli' && realpath($argv[0]) === __FILE__) {
    if ($argc !== 4) {
        fwrite(STDERR, "usage: php verify.php <body file> <secret> <X-Service-Signature value>\n");
        exit(2);
    }
    [, $bodyFile, $secret, $signature] = $argv;
    $valid = linkhooks_verify(file_get_contents($bodyFile), $secret, $signature);
    echo $valid ? "valid\n" : "invalid\n";
    exit($valid ? 0 : 1);
}
