package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// informedKinds are the stand-in's kinds a cluster is read through
// informers for, where the cluster serves them: every sweep used to list
// each of them in every Shoot every 3 s, about four of every five requests
// an idle Shoot's API server served, on the two cores the plane shares.
var informedKinds = append([]schema.GroupVersionResource{controlPlanes, cephClusters, cephClients, remoteClusters, remoteArbiters}, rookPools...)

// informed reads one cluster through informers. What is read before an
// informer has synced is read from the API server, as before; a kind the
// cluster does not serve (a control-plane Shoot has no Rook CRDs) is not
// found, without a request.
type informed struct {
	stop   context.CancelFunc
	kube   informers.SharedInformerFactory
	dyn    dynamicinformer.DynamicSharedInformerFactory
	crds   metadatainformer.SharedInformerFactory
	served map[schema.GroupVersionResource]bool
	// staleSince is when a CRD of a kind not served at discovery last
	// appeared or changed (Flux applies a cluster's layer after the
	// cluster is up), in Unix nanoseconds; 0 while none did. Each sweep
	// then discovers the cluster's kinds again, and informs it anew once
	// they include the new kind.
	staleSince atomic.Int64

	// The typed kinds the sweeps read, of kube.
	secrets, daemonSets, nodes, namespaces cache.SharedIndexInformer
}

// inform starts c's informers; every change they see calls wake. A
// cluster whose kinds cannot be discovered yet (its API server starting)
// stays read from the API server, and is informed at a later sweep; so is
// one where a CRD of a kind it did not serve appeared (stale).
func (c *cluster) inform(wake func()) {
	if served, ok := c.discover(); ok {
		c.start(served, wake)
	}
}

// discover returns which of informedKinds c's API server serves; false
// when it could not be asked.
func (c *cluster) discover() (map[schema.GroupVersionResource]bool, bool) {
	served := map[schema.GroupVersionResource]bool{}
	discovered := map[schema.GroupVersion]bool{}
	for _, gvr := range informedKinds {
		gv := gvr.GroupVersion()
		if discovered[gv] {
			continue
		}
		l, err := c.kube.Discovery().ServerResourcesForGroupVersion(gv.String())
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, false
		}
		discovered[gv] = true
		if l != nil {
			for _, r := range l.APIResources {
				served[gv.WithResource(r.Name)] = true
			}
		}
	}
	return served, true
}

// start informs c of the kinds served, and of the CRDs of those it does
// not serve yet.
func (c *cluster) start(served map[schema.GroupVersionResource]bool, wake func()) {
	// The informers' watches last as long as the API server lets them:
	// the requests' 10-s timeout ended each after 10 s, and every Shoot's
	// API server served six new watches a minute per kind.
	watching := rest.CopyConfig(c.cfg)
	watching.Timeout = 0
	kubeW, err := kubernetes.NewForConfig(watching)
	if err != nil {
		return
	}
	dynW, err := dynamic.NewForConfig(watching)
	if err != nil {
		return
	}
	metaW, err := metadata.NewForConfig(watching)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	kube := informers.NewSharedInformerFactory(kubeW, 0)
	in := &informed{stop: cancel, served: served, kube: kube,
		dyn:     dynamicinformer.NewDynamicSharedInformerFactory(dynW, 0),
		crds:    metadatainformer.NewSharedInformerFactory(metaW, 0),
		secrets: kube.Core().V1().Secrets().Informer(), nodes: kube.Core().V1().Nodes().Informer(),
		namespaces: kube.Core().V1().Namespaces().Informer(), daemonSets: kube.Apps().V1().DaemonSets().Informer()}
	infs := []cache.SharedIndexInformer{in.secrets, in.nodes, in.namespaces, in.daemonSets}
	for _, gvr := range informedKinds {
		if served[gvr] {
			infs = append(infs, in.dyn.ForResource(gvr).Informer())
		}
	}
	changed := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { wake() },
		UpdateFunc: func(any, any) { wake() },
		DeleteFunc: func(any) { wake() },
	}
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(changed); err != nil {
			cancel()
			return
		}
	}
	// Only the CRDs' names: a kind of informedKinds the cluster did not
	// serve at discovery, once its CRD is there (and again once it is
	// established), has the cluster informed anew at the next sweep.
	appeared := func(obj any) {
		m, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		for _, gvr := range informedKinds {
			if !served[gvr] && m.GetName() == gvr.Resource+"."+gvr.Group {
				in.staleSince.Store(time.Now().UnixNano())
				wake()
				return
			}
		}
	}
	crds := in.crds.ForResource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")).Informer()
	if _, err := crds.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    appeared,
		UpdateFunc: func(_, obj any) { appeared(obj) },
	}); err != nil {
		cancel()
		return
	}
	in.kube.Start(ctx.Done())
	in.dyn.Start(ctx.Done())
	in.crds.Start(ctx.Done())
	c.informed.Store(in)
}

// forget stops c's informers.
func (c *cluster) forget() {
	if in := c.informed.Load(); in != nil {
		in.shutdown()
	}
}

// reinform informs c anew once a CRD of a kind it did not serve appeared
// and discovery serves that kind, and only then stops the old informers,
// which serve the reads meanwhile. Discovery lags the CRD: the API server
// serves a kind some time after its CRD is created, and after it is
// Established too (the discovery document is rebuilt apart from the
// condition), and no CRD event follows then. So every sweep asks again,
// for discoveryLag after the CRD's last event: a cluster asked once and
// never again kept reading a control-plane cluster without its
// ControlPlanes, and a cloud waited on its ControlPlane for ten minutes
// (the cold CI run of stop 78).
func (c *cluster) reinform(wake func()) {
	in := c.informed.Load()
	if in == nil {
		return
	}
	since := in.staleSince.Load()
	if since == 0 {
		return
	}
	served, ok := c.discover()
	switch {
	case !ok: // not answered: the next sweep asks again
	case len(served) > len(in.served):
		c.start(served, wake)
		if c.informed.Load() != in { // started: the old ones go; not started: they keep serving, and the next sweep tries again
			in.shutdown()
		}
	case time.Since(time.Unix(0, since)) > discoveryLag:
		// A CRD never served (removed again, or refused): stop asking
		// until the next CRD event.
		in.staleSince.CompareAndSwap(since, 0)
	}
}

// discoveryLag is how long after a CRD's last event the sweeps ask
// whether the API server serves its kind yet.
var discoveryLag = 2 * time.Minute

func (in *informed) shutdown() {
	in.stop()
	in.kube.Shutdown()
	in.dyn.Shutdown()
	in.crds.Shutdown()
}

// synced is c's informer that pick chooses, once it has synced; nil
// before.
func (c *cluster) synced(pick func(*informed) cache.SharedIndexInformer) cache.SharedIndexInformer {
	if in := c.informed.Load(); in != nil {
		if inf := pick(in); inf.HasSynced() {
			return inf
		}
	}
	return nil
}

// list returns the objects of gvr in every namespace of c.
func (c *cluster) list(ctx context.Context, gvr schema.GroupVersionResource) ([]*unstructured.Unstructured, error) {
	if in := c.informed.Load(); in != nil {
		if !in.served[gvr] {
			return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
		}
		if inf := in.dyn.ForResource(gvr); inf.Informer().HasSynced() {
			objs, err := inf.Lister().List(labels.Everything())
			if err != nil {
				return nil, err
			}
			out := make([]*unstructured.Unstructured, 0, len(objs))
			for _, o := range objs {
				u, ok := o.(*unstructured.Unstructured)
				if !ok {
					return nil, fmt.Errorf("%s: the informer holds a %T", gvr.Resource, o)
				}
				out = append(out, u.DeepCopy())
			}
			return out, nil
		}
	}
	l, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	return out, nil
}

// secret reads Secret namespace/name of c.
func (c *cluster) secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	if inf := c.synced(func(in *informed) cache.SharedIndexInformer { return in.secrets }); inf != nil {
		s, err := corelisters.NewSecretLister(inf.GetIndexer()).Secrets(namespace).Get(name)
		if err != nil {
			return nil, err
		}
		return s.DeepCopy(), nil
	}
	return c.kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// daemonSet reads DaemonSet namespace/name of c.
func (c *cluster) daemonSet(ctx context.Context, namespace, name string) (*appsv1.DaemonSet, error) {
	if inf := c.synced(func(in *informed) cache.SharedIndexInformer { return in.daemonSets }); inf != nil {
		d, err := appslisters.NewDaemonSetLister(inf.GetIndexer()).DaemonSets(namespace).Get(name)
		if err != nil {
			return nil, err
		}
		return d.DeepCopy(), nil
	}
	return c.kube.AppsV1().DaemonSets(namespace).Get(ctx, name, metav1.GetOptions{})
}

// daemonSets lists c's DaemonSets that sel selects, in every namespace.
func (c *cluster) daemonSets(ctx context.Context, sel labels.Selector) ([]appsv1.DaemonSet, error) {
	if inf := c.synced(func(in *informed) cache.SharedIndexInformer { return in.daemonSets }); inf != nil {
		l, err := appslisters.NewDaemonSetLister(inf.GetIndexer()).List(sel)
		return derefAll(l), err
	}
	l, err := c.kube.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// nodes lists c's nodes.
func (c *cluster) nodes(ctx context.Context) ([]corev1.Node, error) {
	if inf := c.synced(func(in *informed) cache.SharedIndexInformer { return in.nodes }); inf != nil {
		l, err := corelisters.NewNodeLister(inf.GetIndexer()).List(labels.Everything())
		return derefAll(l), err
	}
	l, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// namespaces lists c's namespaces.
func (c *cluster) namespaces(ctx context.Context) ([]corev1.Namespace, error) {
	if inf := c.synced(func(in *informed) cache.SharedIndexInformer { return in.namespaces }); inf != nil {
		l, err := corelisters.NewNamespaceLister(inf.GetIndexer()).List(labels.Everything())
		return derefAll(l), err
	}
	l, err := c.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// derefAll copies what a lister returned: its objects are the informer's
// own, not to be changed.
func derefAll[T any, P interface {
	*T
	DeepCopy() P
}](l []P) []T {
	out := make([]T, 0, len(l))
	for _, p := range l {
		out = append(out, *p.DeepCopy())
	}
	return out
}
