<?php
// What the harness sets up after WordPress's installer, from the CLI: the permalink structure,
// and an application password for the REST API (the first one cannot be made over HTTP without a
// logged-in browser session). Prints the application password.
// php site-setup.php <wordpress tree> <site url> <user login> <plain|pretty>
[, $root, $siteUrl, $login, $permalinks] = $argv;
define('ABSPATH', rtrim($root, '/') . '/');
$site = parse_url($siteUrl);
$_SERVER['HTTP_HOST'] = $site['host'] . (isset($site['port']) ? ':' . $site['port'] : '');
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
require ABSPATH . 'wp-load.php';

// The installer turns pretty permalinks on when its loopback probe of one succeeds.
update_option('permalink_structure', $permalinks === 'pretty' ? '/%postname%/' : '');

$user = get_user_by('login', $login);
if (!$user) {
    fwrite(STDERR, "no user $login\n");
    exit(1);
}
$created = WP_Application_Passwords::create_new_application_password($user->ID, ['name' => 'tests']);
if (is_wp_error($created)) {
    fwrite(STDERR, $created->get_error_message() . "\n");
    exit(1);
}
echo $created[0];
