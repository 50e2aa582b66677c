<?php
// Router for `php -S` serving the harness's WordPress tree. The tree is symlinks into Debian's
// /usr/share/wordpress, so WordPress's own __DIR__ would resolve to Debian's copy and load Debian's
// wp-config.php (which wants a file under /etc/wordpress): ABSPATH is pinned to the served tree
// before any WordPress file runs, so the tree's own wp-config.php is the one loaded.
$root = rtrim($_SERVER['DOCUMENT_ROOT'], '/');
define('ABSPATH', $root . '/');

$path = rawurldecode(parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) ?? '/');
if (strpos($path, '..') !== false) {
    http_response_code(400);
    return true;
}
$file = $root . $path;
if (is_dir($file)) {
    $file = rtrim($file, '/') . '/index.php';
}
if (!is_file($file)) {
    // Pretty permalinks and everything else WordPress routes itself go through index.php.
    $file = $root . '/index.php';
    $path = '/index.php';
} elseif (substr($file, -4) !== '.php') {
    return false; // a static file (an uploaded image, a stylesheet): the built-in server sends it
} elseif (substr($path, -1) === '/' || is_dir($root . $path)) {
    $path = rtrim($path, '/') . '/index.php';
}

$_SERVER['SCRIPT_FILENAME'] = $file;
$_SERVER['SCRIPT_NAME'] = $path;
$_SERVER['PHP_SELF'] = $path;
chdir(dirname($file));
require $file;
