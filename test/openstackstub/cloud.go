package openstackstub

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A Cloud is one stub OpenStack: Keystone at AuthURL, and Nova, Cinder and
// Neutron in its catalog, all on one address.
type Cloud struct {
	Index   int
	AuthURL string // https://127.1.x.y:port/v3
	CA      []byte // PEM of the CA that signed the cloud's certificate

	base   string
	server *http.Server
	count  counters

	mu         sync.Mutex
	tokens     map[string]scope // token: whom it was issued to
	projects   map[string]map[string]any
	users      map[string]map[string]any
	passwords  map[string]string // user ID: password
	grants     map[string]bool   // project/user/role
	appcreds   map[string]map[string]any
	aggregates map[int]map[string]any
	nextAgg    int
	types      map[string]map[string]any
	access     map[string]map[string]bool // volume type: projects
	quotas     map[string]map[string]map[string]any
	seen       map[string]time.Time // object: when the provider last read it
}

func newCloud(i int, base string, ca []byte) *Cloud {
	c := &Cloud{Index: i, AuthURL: base + "/v3", CA: ca, base: base,
		tokens: map[string]scope{}, projects: map[string]map[string]any{}, users: map[string]map[string]any{},
		passwords: map[string]string{}, grants: map[string]bool{}, appcreds: map[string]map[string]any{},
		aggregates: map[int]map[string]any{}, nextAgg: 1, types: map[string]map[string]any{}, access: map[string]map[string]bool{},
		quotas: map[string]map[string]map[string]any{"compute": {}, "volume": {}, "network": {}}, seen: map[string]time.Time{}}
	c.projects["admin"] = map[string]any{"id": "admin", "name": "admin", "domain_id": "default", "enabled": true, "description": "", "is_domain": false, "parent_id": "default", "tags": []string{}}
	c.users["admin"] = map[string]any{"id": "admin", "name": "admin", "domain_id": "default", "enabled": true}
	c.passwords["admin"] = AdminPassword
	c.grants["admin/admin/admin"] = true
	return c
}

// Counts returns what the cloud was asked so far.
func (c *Cloud) Counts() Counts {
	return Counts{Auths: c.count.auths.Load(), Reads: c.count.reads.Load(), Writes: c.count.writes.Load(), Unknown: c.count.unknown.Load(),
		Observes: c.count.observes.Load()}
}

// FirstRequest is when the cloud was first asked anything (zero: never).
func (c *Cloud) FirstRequest() time.Time {
	if n := c.count.first.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// LastSeen returns, per object the provider created, when it last read it
// (zero: never since it was created).
func (c *Cloud) LastSeen() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.seen)
}

// DriftAggregate changes the metadata key of the aggregate named name
// behind the provider's back, as an operator's hand would.
func (c *Cloud) DriftAggregate(name, key, value string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.aggregates {
		if a["name"] == name {
			a["metadata"].(map[string]any)[key] = value
			return nil
		}
	}
	return fmt.Errorf("aggregate %q: %w", name, ErrNotFound)
}

// AggregateMetadata returns the metadata of the aggregate named name.
func (c *Cloud) AggregateMetadata(name string) (map[string]any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.aggregates {
		if a["name"] == name {
			return maps.Clone(a["metadata"].(map[string]any)), nil
		}
	}
	return nil, fmt.Errorf("aggregate %q: %w", name, ErrNotFound)
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

const timeFormat = "2006-01-02T15:04:05.000000"

// handler is one route's work, under the cloud's lock; it returns the
// status and the body (nil: none).
// scope is whom a token was issued to: a user, in a project. Keystone makes
// an application credential in the project of the token that asks for it.
type scope struct{ user, project string }

type handler func(r *http.Request, body map[string]any) (int, any)

func (c *Cloud) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/auth/tokens", c.authenticate)
	route := func(pattern string, write bool, h handler) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) { c.serve(w, r, write, h) })
	}
	// Version discovery: gophercloud asks each service's endpoint which
	// major versions it serves before its first call.
	for path, doc := range map[string]map[string]any{
		"/v3":           {"version": map[string]any{"id": "v3.14", "status": "stable"}},
		"/compute/v2.1": {"version": map[string]any{"id": "v2.1", "status": "CURRENT", "version": "2.96", "min_version": "2.1"}},
		"/volume/v3":    {"version": map[string]any{"id": "v3.0", "status": "CURRENT", "version": "3.71", "min_version": "3.0"}},
		"/network":      {"versions": []map[string]any{{"id": "v2.0", "status": "CURRENT"}}},
	} {
		discover := func(w http.ResponseWriter, _ *http.Request) {
			c.first()
			c.count.reads.Add(1)
			reply(w, http.StatusOK, doc)
		}
		mux.HandleFunc("GET "+path+"/{$}", discover)
		mux.HandleFunc("GET "+path+"", discover)
	}
	c.identityRoutes(route)
	c.computeRoutes(route)
	c.blockStorageRoutes(route)
	c.networkRoutes(route)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.first()
		c.count.unknown.Add(1)
		http.Error(w, fmt.Sprintf(`{"error": {"message": "the stub does not serve %s %s"}}`, r.Method, r.URL.Path), http.StatusNotImplemented)
	})
	return mux
}

func (c *Cloud) first() { c.count.first.CompareAndSwap(0, time.Now().UnixNano()) }

// serve checks the token, decodes the body and runs h under the lock.
func (c *Cloud) serve(w http.ResponseWriter, r *http.Request, write bool, h handler) {
	c.first()
	if write {
		c.count.writes.Add(1)
	} else {
		c.count.reads.Add(1)
	}
	var body map[string]any
	if r.Body != nil && r.ContentLength != 0 {
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil && err.Error() != "EOF" {
			reply(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": err.Error()}})
			return
		}
	}
	c.mu.Lock()
	_, ok := c.tokens[r.Header.Get("X-Auth-Token")]
	if !ok {
		c.mu.Unlock()
		reply(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "The request you have made requires authentication."}})
		return
	}
	status, out := h(r, body)
	c.mu.Unlock()
	reply(w, status, out)
}

func reply(w http.ResponseWriter, status int, body any) {
	if body == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func notFound(what string) (int, any) {
	return http.StatusNotFound, map[string]any{"error": map[string]any{"code": 404, "message": "Could not find " + what}}
}

// saw records that the provider read object key now.
func (c *Cloud) saw(key string) {
	c.seen[key] = time.Now()
	c.count.observes.Add(1)
}

// authenticate is POST /v3/auth/tokens, password method, scoped to a
// project by ID or by name in domain Default.
func (c *Cloud) authenticate(w http.ResponseWriter, r *http.Request) {
	c.first()
	c.count.auths.Add(1)
	var req struct {
		Auth struct {
			Identity struct {
				Password struct {
					User struct {
						ID, Name, Password string
					}
				}
			}
			Scope struct {
				Project struct{ ID, Name string }
			}
		}
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		reply(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": err.Error()}})
		return
	}
	u := req.Auth.Identity.Password.User
	c.mu.Lock()
	defer c.mu.Unlock()
	userID := u.ID
	if userID == "" {
		for id, user := range c.users {
			if user["name"] == u.Name {
				userID = id
			}
		}
	}
	projectID := req.Auth.Scope.Project.ID
	if projectID == "" {
		for id, p := range c.projects {
			if p["name"] == req.Auth.Scope.Project.Name {
				projectID = id
			}
		}
	}
	pw, ok := c.passwords[userID]
	if !ok || pw != u.Password || c.projects[projectID] == nil {
		reply(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "The request you have made requires authentication."}})
		return
	}
	var roles []map[string]any
	for _, role := range []string{"admin", "member", "reader"} {
		if c.grants[projectID+"/"+userID+"/"+role] {
			roles = append(roles, map[string]any{"id": role, "name": role})
		}
	}
	if len(roles) == 0 {
		reply(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "message": "user has no role on the project"}})
		return
	}
	token := newID()
	c.tokens[token] = scope{user: userID, project: projectID}
	endpoint := func(kind, name, path string) map[string]any {
		return map[string]any{"type": kind, "name": name, "id": kind, "endpoints": []map[string]any{
			{"id": kind + "-public", "interface": "public", "region": Region, "region_id": Region, "url": c.base + path}}}
	}
	w.Header().Set("X-Subject-Token", token)
	reply(w, http.StatusCreated, map[string]any{"token": map[string]any{
		"methods": []string{"password"}, "expires_at": time.Now().UTC().Add(24*time.Hour).Format(timeFormat) + "Z",
		"issued_at": time.Now().UTC().Format(timeFormat) + "Z",
		"user":      map[string]any{"id": userID, "name": c.users[userID]["name"], "domain": map[string]any{"id": "default", "name": "Default"}},
		"project":   map[string]any{"id": projectID, "name": c.projects[projectID]["name"], "domain": map[string]any{"id": "default", "name": "Default"}},
		"roles":     roles,
		"catalog": []map[string]any{
			endpoint("identity", "keystone", "/v3"), endpoint("compute", "nova", "/compute/v2.1"),
			endpoint("block-storage", "cinder", "/volume/v3"), endpoint("volumev3", "cinderv3", "/volume/v3"),
			endpoint("network", "neutron", "/network"),
		},
	}})
}

// list filters objects by the query's name (and domain_id), sorted by ID.
func list(r *http.Request, objects map[string]map[string]any) []map[string]any {
	name, domain := r.URL.Query().Get("name"), r.URL.Query().Get("domain_id")
	return slices.DeleteFunc(byID(objects), func(o map[string]any) bool {
		return (name != "" && o["name"] != name) || (domain != "" && o["domain_id"] != domain)
	})
}

func links() map[string]any { return map[string]any{"next": nil, "previous": nil, "self": ""} }

// merge sets the keys of in on o, except id.
func merge(o map[string]any, in any) {
	m, _ := in.(map[string]any)
	for k, v := range m {
		if k != "id" {
			o[k] = v
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
