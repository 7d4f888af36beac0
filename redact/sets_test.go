package redact

import (
	"testing"

	"github.com/omnictx/omni/internal/settest"
)

// The sets below were map literals, built by the package's initialisation;
// they are switch statements now (no code runs when the package loads).
// These are the old literals: each function must answer as its map did,
// for every key and for near misses (other case, a byte more or less).
var oldSets = map[string]map[string]bool{
	"queryCredential": {"sig": true, "signature": true, "x-amz-signature": true, "x-amz-credential": true, "x-amz-security-token": true,
		"x-goog-signature": true, "x-goog-credential": true, "code": false, "access_token": true, "refresh_token": true,
		"id_token": true, "client_secret": true, "apikey": true, "key": false, "auth": true, "pwd": true},
	"mysqlClients": {"mysql": true, "mysqldump": true, "mysqladmin": true, "mariadb": true, "mysqlimport": true, "mysqlshow": true,
		"mysqlcheck": true, "mariadb-dump": true, "mariadb-admin": true, "mysqlsh": true, "mysqlpump": true},
	"configVerbs": {"set": true, "add": true, "put": true, "config": true},
	"configNouns": {"config": true, "configure": true, "configuration": true, "settings": true,
		"secret": true, "secrets": true, "credential": true, "credentials": true, "env": true, "vars": true,
		"variable": true, "variables": true, "kv": true, "auth": true, "token": true, "property": true, "git": true},
	"valueFlags": {"--value": true, "--secret-value": true, "--body": true, "-b": true, "--data": true},
	"secretWords": {"token": true, "tokens": true, "password": true, "passwd": true, "secret": true, "secrets": true,
		"credential": true, "credentials": true, "creds": true, "apikey": true, "passphrase": true},
	"secretStores": {"pass": true, "gopass": true, "keyring": true},
	"valueSelectors": {"field": true, "f": true, "query": true, "jsonpath": true, "o": true, "output": true,
		"template": true, "go-template": true, "format": true},
	"readerCommands": {"cat": true, "head": true, "tail": true, "more": true, "bat": true, "type": true},
	"searchCommands": {"grep": true, "rg": true, "ag": true, "ack": true, "find": true, "fd": true,
		"sed": true, "awk": true, "git": true, "ls": true, "echo": true, "printf": true, "man": true, "which": true,
		"go": true, "python": true, "python3": true, "node": true, "npm": true, "pytest": true, "make": true, "cargo": true,
		"tree": true, "wc": true, "diff": true, "sort": true, "uniq": true, "jq": true, "yq": true, "cd": true},
	"exactPatterns": {"PWD": true},
	"nonSecretSuffixes": {"NAME": true, "NAMES": true, "MODEL": true, "LENGTH": true, "LEN": true, "FIELD": true, "FIELDS": true,
		"BACKEND": true, "BACKENDS": true, "CLASS": true, "HEADER": true, "PATH": true, "FILE": true, "DIR": true,
		"TYPE": true, "PREFIX": true, "SUFFIX": true, "EXPIRY": true, "EXPIRES": true, "TTL": true, "TIMEOUT": true,
		"MIN": true, "MAX": true, "COUNT": true, "SIZE": true, "AGE": true, "DOMAIN": true, "ENABLED": true,
		"DISABLED": true, "REQUIRED": true, "VERSION": true, "FORMAT": true, "METHOD": true, "ALGORITHM": true,
		"HASHERS": true, "VALIDATORS": true, "SERIALIZER": true, "MODULE": true, "REGION": true, "PROFILE": true,
		"HOST": true, "PORT": true, "LOCATION": true, "MODE": true, "LEVEL": true, "STYLE": true, "CHARS": true,
		"SALT": true, "HINT": true, "PROMPT": true, "SOCK": true, "SOCKET": true, "REF": true, "REFS": true,
		"ID": true, "IDS": true, "AT": true, "LIMIT": true, "LIMITS": true, "USAGE": true, "URL_FILE": true,
		"POLICY": true, "SCOPE": true, "SCOPES": true, "ISSUER": true, "AUDIENCE": true, "ENDPOINT": true,
		"ENV": true, "VAR": true, "SOURCE": true, "STATUS": true, "STATE": true, "KIND": true, "LABEL": true,
		"PARAM": true, "PARAMS": true, "ARG": true, "ARGS": true, "PLACEHOLDER": true, "SET": true, "USER": true,
		"USERNAME": true, "LOGIN": true, "SELECTOR": true, "DATE": true, "TIME": true, "RESET": true, "ROTATION": true,
		"CHANGED": true, "ENCODING": true, "CACHE": true, "STORE": true, "PROVIDER": true, "PROVIDERS": true,
		"STRATEGY": true, "FILES": true, "KEYS": true, "TOKENS": true, "SECRETS": true, "LIST": true,
		"REGEX": true, "PATTERN": true, "PATTERNS": true, "FUNC": true, "FN": true, "MAP": true, "BINDING": true,
		"BINDINGS": true, "COLUMN": true, "INDEX": true, "HANDLER": true, "CALLBACK": true, "HOOK": true, "EVENT": true,
		"ERROR": true, "ERRORS": true, "EXCEPTION": true, "MESSAGE": true, "MSG": true, "CHECK": true, "TEST": true,
		"TESTS": true, "VALIDATOR": true, "RESULT": true, "RESPONSE": true, "REQUEST": true, "FORM": true, "VIEW": true,
		"STDIN": true, "FROM": true, "CMD": true, "COMMAND": true, "HELPER": true, "SAMESITE": true, "SECURE": true,
		"HTTPONLY": true, "INPUT": true, "FALLBACKS": true, "FALLBACK": true, "FIELD_NAME": true, "LOOKUP": true, "SPEC": true, "TEMPLATE": true,
		"LIFETIME": true, "DURATION": true, "INTERVAL": true, "PERIOD": true},
	"placeholders": {"changeme": true, "change_me": true, "change-me": true, "changeit": true, "secret": true, "password": true,
		"passwd": true, "pass": true, "token": true, "apikey": true, "api_key": true, "api-key": true, "key": true,
		"example": true, "dummy": true, "test": true, "testing": true, "sample": true, "placeholder": true,
		"todo": true, "tbd": true, "fixme": true, "foo": true, "bar": true, "baz": true, "qux": true, "none": true,
		"null": true, "nil": true, "undefined": true, "redacted": true, "hidden": true, "masked": true, "...": true,
		"…": true, "-": true, "~": true, "value": true, "string": true, "str": true, "mypassword": true,
		"yourpassword": true, "your_password": true, "your-password": true, "secret_key": true, "xyz": true,
		"abc": true, "pw": true,
		"pwd": true, "letmein": true, "user": true, "username": true,
		"<empty>": true, "empty": true, "notset": true, "not-set": true, "unset": true, "default": true,
		"user:pass": true, "user:password": true, "username:password": true, "admin:admin": true, "userpass": true},
	"statusWord": {"required": true, "missing": true, "expired": true, "invalid": true, "empty": true, "set": true,
		"unset": true, "ok": true, "present": true, "absent": true, "hidden": true, "redacted": true,
		"n/a": true, "na": true, "unknown": true, "optional": true, "disabled": true, "enabled": true,
		"valid": true, "revoked": true, "denied": true, "failed": true, "error": true, "none.": true,
		"true": true, "false": true, "null": true, "yes": true, "no": true, "configured": true, "found": true,
		"not": true, "refreshed": true, "rotated": true, "generated": true, "created": true, "deleted": true,
		// Access levels (a GitHub Actions workflow's "id-token: write").
		"read": true, "write": true, "none": true, "read-all": true, "write-all": true},
	"abbreviations": {"PWD": true, "PW": true, "DB": true, "CFG": true, "CTX": true, "REQ": true, "RS": true, "MSG": true, "FN": true,
		"CB": true, "SSH": true, "TLS": true, "JWT": true, "SRC": true, "DST": true, "TMP": true, "STR": true,
		"SQL": true, "HTTP": true, "HTTPS": true, "XML": true, "CSV": true, "PSK": true, "MFA": true, "TTL": true,
		"KV": true, "K": true, "V": true, "X": true, "S": true, "N": true, "P": true, "B": true, "C": true},
	"storeSchemes": {"postgres": true, "postgresql": true, "mysql": true, "mariadb": true, "mongodb": true, "mongodb+srv": true,
		"redis": true, "rediss": true, "amqp": true, "amqps": true, "mssql": true, "sqlserver": true,
		"clickhouse": true, "cockroachdb": true, "nats": true, "memcached": true, "cassandra": true,
		"sqlite": true, "sqlite3": true, "oracle": true, "db2": true, "neo4j": true, "bolt": true},
}

func TestSetsAnswerAsTheirMaps(t *testing.T) {
	funcs := map[string]func(string) bool{
		"queryCredential":   queryCredential,
		"mysqlClients":      mysqlClients,
		"configVerbs":       configVerbs,
		"configNouns":       configNouns,
		"valueFlags":        valueFlags,
		"secretWords":       secretWords,
		"secretStores":      secretStores,
		"valueSelectors":    valueSelectors,
		"readerCommands":    readerCommands,
		"searchCommands":    searchCommands,
		"exactPatterns":     exactPatterns,
		"nonSecretSuffixes": nonSecretSuffixes,
		"placeholders":      placeholders,
		"statusWord":        statusWord,
		"abbreviations":     abbreviations,
		"storeSchemes":      storeSchemes,
	}
	for name, m := range oldSets {
		settest.AnswersAsMap(t, name, funcs[name], m)
	}
}
